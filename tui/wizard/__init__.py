"""The build wizard's widgets: field rows, steps, the review view, the confirm dialog."""
