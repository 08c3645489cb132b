//! End-to-end tests of krt live in `tests/`; this library is empty.
