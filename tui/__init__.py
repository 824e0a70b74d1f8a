"""The Textual dashboard and the `pth-top` command line."""

__version__ = "0.1.0"
