// libavahi-client (Linux only): one D-Bus connection to avahi-daemon per process, for resolving services
// with their address in one request (see Sources/P2P/Discovery/AvahiResolver.swift).
#include <string.h>
#include <stdint.h>
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-common/address.h>
#include <avahi-common/domain.h>
#include <avahi-common/error.h>
#include <avahi-common/strlst.h>
#include <avahi-common/thread-watch.h>

/// Copies an address's bytes (network order) to `out`; returns 4, 16, or 0 for none.
static inline int p2p_avahi_address_bytes(const AvahiAddress *address, uint8_t *out) {
    if (!address) return 0;
    if (address->proto == AVAHI_PROTO_INET) { memcpy(out, &address->data.ipv4.address, 4); return 4; }
    if (address->proto == AVAHI_PROTO_INET6) { memcpy(out, address->data.ipv6.address, 16); return 16; }
    return 0;
}
