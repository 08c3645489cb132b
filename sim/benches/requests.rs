//! Request benchmarks of krt-sim: an empty placeholder, nothing is measured yet.

fn main() {}
