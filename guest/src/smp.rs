//! Strategic merge patch for built-in kinds: merge keys, three-way patch generation and application.
