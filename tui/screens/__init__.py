"""Screens of the pth-top app (thin: they arrange panels and route keys)."""
