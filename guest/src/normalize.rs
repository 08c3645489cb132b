//! Removing server-set fields from objects.
