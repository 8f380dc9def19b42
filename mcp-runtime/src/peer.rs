//! The address a per-client limit counts an anonymous client by.

use std::net::{IpAddr, Ipv6Addr};

/// `ip`, or for IPv6 its /64: a client usually holds a whole /64, so the
/// addresses in it count as one client (an IPv4-mapped address is its IPv4
/// one).
pub(crate) fn key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use crate::peer::key;

    #[test]
    fn an_ipv6_client_is_its_64() {
        let key_of = |ip: &str| key(ip.parse().unwrap()).to_string();
        assert_eq!(key_of("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::");
        assert_eq!(key_of("2001:db8:1:2:bbbb::9"), "2001:db8:1:2::");
        assert_eq!(key_of("::ffff:10.0.0.7"), "10.0.0.7");
        assert_eq!(key_of("10.0.0.7"), "10.0.0.7");
    }
}
