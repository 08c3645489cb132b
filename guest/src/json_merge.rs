//! Three-way JSON merge patch (RFC 7386) for CRDs and unknown kinds.
