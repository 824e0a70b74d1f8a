"""The flight recorder: samples and events into a SQLite file (`pth-top record`), read back by `pth-top replay`."""
