//! Health (readiness) of live objects, following kstatus with the deviations of k8s-semantics §8.3.
