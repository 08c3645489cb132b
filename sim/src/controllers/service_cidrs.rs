//! kube-controller-manager's ServiceCIDR controller, as far as objects show it: every
//! ServiceCIDR carries its finalizer, which goes once the terminating ServiceCIDR leaves no
//! IPAddress without a range (an address in no other ServiceCIDR that is not terminating).

use std::net::IpAddr;

use serde_json::Value;

use super::save_as_controller_manager;
use crate::lifecycle;
use crate::store::State;

const READS: &[(&str, &str)] = &[
    ("networking.k8s.io", "servicecidrs"),
    ("networking.k8s.io", "ipaddresses"),
];

/// The controller's finalizer.
const FINALIZER: &str = "networking.k8s.io/service-cidr-finalizer";

/// One pass (none when no ServiceCIDR or IPAddress changed).
pub fn reconcile(state: &mut State) {
    if !state.changed_since_last_run("service-cidrs", READS) {
        return;
    }
    let cidrs: Vec<_> = state
        .list("networking.k8s.io", "servicecidrs", None)
        .into_iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let addresses: Vec<IpAddr> = state
        .list("networking.k8s.io", "ipaddresses", None)
        .into_iter()
        .filter_map(|(_, ip)| ip["metadata"]["name"].as_str()?.parse().ok())
        .collect();
    for (key, cidr) in &cidrs {
        let terminating = !cidr["metadata"]["deletionTimestamp"].is_null();
        let has = lifecycle::has_finalizer(cidr, FINALIZER);
        if !terminating && !has {
            let mut next = cidr.clone();
            lifecycle::add_finalizer(&mut next, FINALIZER);
            save_as_controller_manager(state, key, Some(cidr), next);
        } else if terminating && has {
            let others: Vec<&Value> = cidrs
                .iter()
                .filter(|(k, c)| k != key && c["metadata"]["deletionTimestamp"].is_null())
                .map(|(_, c)| c)
                .collect();
            let orphaned = addresses
                .iter()
                .any(|ip| contains(cidr, ip) && !others.iter().any(|c| contains(c, ip)));
            if !orphaned {
                lifecycle::release_finalizer(state, key, cidr, FINALIZER);
            }
        }
    }
}

/// Whether one of `cidr`'s ranges holds `ip`.
fn contains(cidr: &Value, ip: &IpAddr) -> bool {
    cidr["spec"]["cidrs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|range| in_range(range, ip))
}

/// Whether `range` (`10.96.0.0/12`, `fd00::/108`) holds `ip`.
fn in_range(range: &str, ip: &IpAddr) -> bool {
    let Some((network, bits)) = range.split_once('/') else {
        return false;
    };
    let (Ok(network), Ok(bits)) = (network.parse::<IpAddr>(), bits.parse::<u32>()) else {
        return false;
    };
    match (network, ip) {
        (IpAddr::V4(n), IpAddr::V4(a)) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            u32::from(n) & mask == u32::from(*a) & mask
        }
        (IpAddr::V6(n), IpAddr::V6(a)) if bits <= 128 => {
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            u128::from(n) & mask == u128::from(*a) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_hold_their_addresses_only() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(in_range("10.100.0.0/24", &ip("10.100.0.10")));
        assert!(!in_range("10.100.0.0/24", &ip("10.100.1.10")));
        assert!(in_range("0.0.0.0/0", &ip("192.168.1.1")));
        assert!(in_range("fd00::/108", &ip("fd00::1")));
        assert!(!in_range("fd00::/108", &ip("10.100.0.10")));
    }
}
