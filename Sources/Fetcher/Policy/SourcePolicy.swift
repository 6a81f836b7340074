/// Which addresses a transfer may connect to: everything (the default), or public addresses only.
///
///     var request = FetchRequest(url: url)
///     request.sourcePolicy = .publicOnly                      // refuse loopback, private, link-local, …
///     request.sourcePolicy = .publicOnly(allowing: ["10.1.0.0/16"].compactMap(IPNetwork.init))
///
/// Under `.publicOnly`, the check runs on the address actually connected, not on the URL's host name:
/// libcurl's `CURLOPT_OPENSOCKETFUNCTION` sees every resolved address before `connect`, and
/// `CURLOPT_PREREQFUNCTION` checks `CURLINFO_PRIMARY_IP` before each request is sent (a reused connection
/// too). So every redirect hop and every DNS answer (DNS rebinding included) is checked, and a refused
/// address gets no byte: the transfer fails with `FetchError.addressRefused`.
///
/// Proxies: under `.publicOnly`, proxies from the environment (`http_proxy`, `HTTPS_PROXY`, `ALL_PROXY`, …)
/// are not used, so the address checked is always the origin's (a proxy would resolve and dial the origin
/// itself, out of our sight). Under `.allowAll`, libcurl uses them as usual.
///
/// The allow-list holds address blocks (CIDR), not host names: the check sees the address being dialled,
/// and a name is only as trustworthy as its DNS answer.
///
/// A value type; Sendable.
public struct SourcePolicy: Sendable, Hashable, CustomStringConvertible {
    /// Whether only public addresses are allowed (besides `allowedNetworks`).
    public var isPublicOnly: Bool
    /// Non-public blocks allowed anyway under `isPublicOnly` (e.g. an internal image host). Checked against the
    /// address connected and, when it wraps an IPv4 address, against that address too. Empty by default.
    public var allowedNetworks: [IPNetwork]
    /// Host names a transfer may reach (exact, case-insensitive; `*.example.com` for its subdomains), checked on
    /// the request's URL (else `FetchError.hostRefused`, nothing sent) and on each redirect's target before it is
    /// followed (else `FetchError.redirectRefused`). Hosts are read by libcurl's URL parser — the one that
    /// connects — and a redirect's target is the one libcurl computes, so no URL can mean one host to the check
    /// and another to the transfer. Empty (the default): any host. Independent of `isPublicOnly`.
    public var allowedHosts: [String]

    /// A policy.
    public init(isPublicOnly: Bool, allowedNetworks: [IPNetwork] = [], allowedHosts: [String] = []) {
        self.isPublicOnly = isPublicOnly
        self.allowedNetworks = allowedNetworks
        self.allowedHosts = allowedHosts
    }

    /// Whether `host` is named by `allowedHosts` (always, when it is empty). Pure.
    public func allowsHost(_ host: String?) -> Bool {
        guard !allowedHosts.isEmpty else { return true }
        guard let host = host?.lowercased(), !host.isEmpty else { return false }
        return allowedHosts.contains { entry in
            let entry = entry.lowercased()
            return entry.hasPrefix("*.") ? host.hasSuffix(entry.dropFirst()) : host == entry
        }
    }

    /// Every address is allowed: the library default (as Nuke, Kingfisher, SDWebImage and imgproxy's
    /// defaults do), for apps that load URLs they trust.
    public static let allowAll = SourcePolicy(isPublicOnly: false)

    /// Public addresses only: for services loading URLs they do not control (link previews, proxies).
    public static let publicOnly = SourcePolicy(isPublicOnly: true)

    /// Public addresses plus `networks`.
    public static func publicOnly(allowing networks: [IPNetwork]) -> SourcePolicy {
        SourcePolicy(isPublicOnly: true, allowedNetworks: networks)
    }

    /// Why `address` is refused, or nil when the policy allows it. Pure.
    public func refusal(for address: IPAddress) -> AddressCategory? {
        guard isPublicOnly, let category = address.category else { return nil }
        let candidates = [address] + (address.embeddedIPv4?.addresses ?? [])
        if candidates.contains(where: { candidate in allowedNetworks.contains { $0.contains(candidate) } }) {
            return nil
        }
        return category
    }

    /// `allow-all`, `public-only`, or `public-only except 10.0.0.0/8, …`.
    public var description: String {
        guard isPublicOnly else { return "allow-all" }
        guard !allowedNetworks.isEmpty else { return "public-only" }
        return "public-only except " + allowedNetworks.map(\.description).joined(separator: ", ")
    }
}
