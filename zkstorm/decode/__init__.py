"""Decoders: bytes → records, no I/O. ``registry`` maps path patterns to decoders."""
