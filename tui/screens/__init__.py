"""Screens of the pth-top app, one module per mode."""
