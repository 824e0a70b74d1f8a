"""Dashboard panels: each maps a part of a Snapshot onto domain-free widgets."""
