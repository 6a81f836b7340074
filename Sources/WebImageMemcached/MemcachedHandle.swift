internal import CWebImageMemcachedShims
import Foundation

/// One libmemcached handle (`memcached_st`, through the `wi_mc_*` shim).
///
/// - Important: Not thread-safe (libmemcached handles are not): each is owned by one `MemcachedLane` and used
///   only on its serial queue.
final class MemcachedHandle {
    private let mc: OpaquePointer

    /// Outcome of one call: its kind and libmemcached's return code.
    struct Status {
        var kind: Kind
        var code: Int32

        init(kind: wi_mc_kind, code: Int32) {
            switch kind {
            case WI_MC_OK: self.kind = .ok
            case WI_MC_MISS: self.kind = .miss
            case WI_MC_TIMEOUT: self.kind = .timeout
            case WI_MC_UNAVAILABLE: self.kind = .unavailable
            case WI_MC_TOO_LARGE: self.kind = .tooLarge
            default: self.kind = .error
            }
            self.code = code
        }
    }

    /// What a return code means to the tier (`wi_mc_kind`).
    enum Kind {
        case ok, miss, timeout, unavailable, tooLarge, error
    }

    /// Wraps `wi_mc_create` (distribution, timeouts and eject settings, then the servers).
    init(servers: [MemcachedServer], options: MemcachedTier.Options) throws(MemcachedTierError) {
        var settings = wi_mc_settings(
            connect_timeout_ms: Int32(clamping: options.connectTimeoutMilliseconds),
            poll_timeout_ms: Int32(clamping: options.pollTimeoutMilliseconds),
            failure_limit: Int32(clamping: options.failureLimit),
            retry_timeout_s: Int32(clamping: options.retryTimeoutSeconds),
            dead_timeout_s: Int32(clamping: options.deadTimeoutSeconds),
            remove_failed: 1)
        var error = [CChar](repeating: 0, count: 256)
        let hosts = servers.map { strdup($0.host) }
        defer { for host in hosts { free(host) } }
        let ports = servers.map(\.port)
        let weights = servers.map(\.weight)
        let made: OpaquePointer? = hosts.map { UnsafePointer($0) }.withUnsafeBufferPointer { hostPointers in
            wi_mc_create(hostPointers.baseAddress, ports, weights, servers.count, &settings, &error, error.count)
        }
        guard let made else {
            throw .configuration(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        mc = made
    }

    deinit { wi_mc_free(mc) }

    /// The index of the server `key` maps to now (after any ejection), or -1.
    func serverIndex(_ key: String) -> Int {
        var key = key
        return key.withUTF8 { Int(wi_mc_server_index(mc, $0.baseAddress, $0.count)) }
    }

    /// Wraps `memcached_get`.
    func get(_ key: String) -> (Data?, Status) {
        var key = key
        return key.withUTF8 { k in
            var value: UnsafeMutablePointer<CChar>?
            var length = 0
            var code: Int32 = 0
            let kind = wi_mc_get(mc, k.baseAddress, k.count, &value, &length, &code)
            guard kind == WI_MC_OK, let value else { return (nil, Status(kind: kind, code: code)) }
            // Hand the malloc'd buffer to Data without a copy; Data frees it.
            let data = Data(bytesNoCopy: value, count: length, deallocator: .custom { pointer, _ in
                wi_mc_free_value(pointer.assumingMemoryBound(to: CChar.self))
            })
            return (data, Status(kind: kind, code: code))
        }
    }

    /// Wraps `memcached_set`.
    func set(_ key: String, _ value: Data, timeToLive: Int) -> Status {
        var key = key
        return key.withUTF8 { k in
            value.withUnsafeBytes { v in
                var code: Int32 = 0
                let kind = wi_mc_set(mc, k.baseAddress, k.count, v.baseAddress?.assumingMemoryBound(to: CChar.self),
                                     v.count, Int64(timeToLive), &code)
                return Status(kind: kind, code: code)
            }
        }
    }

    /// Wraps `memcached_delete`.
    func delete(_ key: String) -> Status {
        var key = key
        return key.withUTF8 { k in
            var code: Int32 = 0
            let kind = wi_mc_delete(mc, k.baseAddress, k.count, &code)
            return Status(kind: kind, code: code)
        }
    }

    /// Wraps `memcached_mget` + `memcached_fetch_result`: the values found, by key.
    func multiGet(_ keys: [String]) -> ([String: Data], Status) {
        let cKeys = keys.map { strdup($0) }
        defer { for key in cKeys { free(key) } }
        let lengths = keys.map { $0.utf8.count }
        final class Found { var values: [String: Data] = [:] }
        let found = Found()
        var code: Int32 = 0
        let kind = cKeys.map { UnsafePointer($0) }.withUnsafeBufferPointer { keyPointers in
            withExtendedLifetime(found) {
                wi_mc_mget(mc, keyPointers.baseAddress, lengths, keys.count, Unmanaged.passUnretained(found).toOpaque(),
                           { context, key, keyLength, value, valueLength in
                               guard let context, let key else { return }
                               let box = Unmanaged<Found>.fromOpaque(context).takeUnretainedValue()
                               let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keyLength), as: UTF8.self)
                               box.values[name] = value.map { Data(bytes: $0, count: valueLength) } ?? Data()
                           }, &code)
            }
        }
        return (found.values, Status(kind: kind, code: code))
    }

    /// Wraps `memcached_strerror`.
    func message(_ status: Status) -> String { String(cString: wi_mc_strerror(mc, status.code)) }
}

@available(*, unavailable)
extension MemcachedHandle: Sendable {}
