import Dispatch
import Foundation
import KVCache
import Synchronization

/// The shared tier of an `ImageCache` and the writes to it still in flight.
///
/// - Important: Thread-safe (`Mutex`es and `DispatchGroup`s).
final class SharedTierSlot: Sendable {
    let tier = Mutex<(any RemoteCacheTier)?>(nil)
    /// Writes handed to the tier and not yet answered (for `waitForPendingSharedWrites`; `writes` counts them
    /// too, by key, for the removals waiting on them).
    let pendingWrites = DispatchGroup()
    /// Removals asked for (`removeFromSharedTier`) and not yet answered: a group of their own, as each waits
    /// for writes and would never see them end if it were counted among them.
    let pendingRemovals = DispatchGroup()

    /// The writes in flight of one key (by token) and the removals of that key waiting for them (by id), each
    /// with the tokens of the writes it waits for: those in flight when it was asked for, not later ones (a later
    /// write is newer than the removal, and must not be removed by it).
    private struct KeyWrites {
        var inFlight: Set<UInt64> = []
        var waiters: [UInt64: (pending: Set<UInt64>, work: @Sendable () -> Void)] = [:]
    }

    /// The writes in flight by key (its UTF-8 bytes: keys that Swift's `==` calls equal but that differ as
    /// bytes are two entries of the tier, and two here), and the last token or waiter id given.
    ///
    /// By key: a removal waits for the writes of its own key only, which end however busy the tier is with
    /// others. Waiting for all of them to drain (`pendingWrites.notify`) never ended on a busy server: each
    /// removal then ran at its timeout, maybe before a slow write of its own key landed, and dispatch kept its
    /// notify block (with what it captured) until a drain that never came — every 415 leaked its closure
    /// (SharedTierRemovalRetentionReviewTests). A key's entry leaves when it has neither writes nor waiters; a
    /// waiter leaves when it runs, when its writes are answered or at its timeout.
    private let writes = Mutex<(byKey: [[UInt8]: KeyWrites], lastID: UInt64)>(([:], 0))

    /// Counts a write of `key` handed to the tier; balance it with one `writeEnded(forKey:token:)` with the
    /// token returned.
    func writeStarted(forKey key: String) -> UInt64 {
        pendingWrites.enter()
        return writes.withLock { state in
            state.lastID &+= 1
            state.byKey[Array(key.utf8), default: KeyWrites()].inFlight.insert(state.lastID)
            return state.lastID
        }
    }

    /// Counts the write `token` of `key` answered; starts the removals that waited for it last.
    func writeEnded(forKey key: String, token: UInt64) {
        let ready: [@Sendable () -> Void] = writes.withLock { state in
            let exact = Array(key.utf8)
            guard var entry = state.byKey[exact] else { return [] }
            entry.inFlight.remove(token)
            var ready: [@Sendable () -> Void] = []
            for (id, waiter) in entry.waiters {
                var pending = waiter.pending
                pending.remove(token)
                if pending.isEmpty {
                    entry.waiters[id] = nil
                    ready.append(waiter.work)
                } else {
                    entry.waiters[id] = (pending, waiter.work)
                }
            }
            state.byKey[exact] = entry.inFlight.isEmpty && entry.waiters.isEmpty ? nil : entry
            return ready
        }
        for waiter in ready { DispatchQueue.global(qos: .utility).async(execute: waiter) }
        pendingWrites.leave()
    }

    /// Runs `work` on a utility queue, exactly once: when the writes of `key` in flight now are answered (at
    /// once when there are none; writes started later are not waited for), or at `timeout` seconds, whichever
    /// comes first. An infinite timeout waits for those writes only; NaN or a negative one is 0.
    func afterWrites(ofKey key: String, timeout: Double, _ work: @escaping @Sendable () -> Void) {
        let exact = Array(key.utf8)
        let id: UInt64? = writes.withLock { state in
            guard let inFlight = state.byKey[exact]?.inFlight, !inFlight.isEmpty else { return nil }
            state.lastID &+= 1
            state.byKey[exact]?.waiters[state.lastID] = (inFlight, work)
            return state.lastID
        }
        guard let id else { return DispatchQueue.global(qos: .utility).async(execute: work) }
        guard timeout != .infinity else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + (timeout > 0 ? timeout : 0)) { [self] in
            let waiter = writes.withLock { state -> (@Sendable () -> Void)? in
                guard var entry = state.byKey[exact], let waiter = entry.waiters.removeValue(forKey: id) else { return nil }
                state.byKey[exact] = entry.inFlight.isEmpty && entry.waiters.isEmpty ? nil : entry
                return waiter.work
            }
            waiter?()
        }
    }
}

extension ImageCache {
    /// Opens the image cache at `path` with a shared tier after its disk (e.g. a `MemcachedTier` from the
    /// `WebImageMemcached` product). See `sharedTier`.
    ///
    /// - Parameters:
    ///   - path: the folder. Default `ImageCache.defaultPath()`.
    ///   - limits: memory and disk limits. Default `ImageCacheLimits.default` (bounded).
    ///   - sharedTier: the tier asked after a disk miss, written after a fetch; `nil` for none.
    /// - Throws: `KVCacheError` when the folder or its database cannot be created.
    public convenience init(
        path: String = ImageCache.defaultPath(), limits: ImageCacheLimits = .default, sharedTier: (any RemoteCacheTier)?
    ) throws(KVCacheError) {
        try self.init(path: path, limits: limits)
        self.sharedTier = sharedTier
    }

    /// A tier of bytes shared by many processes or machines, asked by the pipeline after a disk miss and before
    /// the network. Default `nil` (none).
    ///
    /// Lookup: memory → disk → shared tier → network. A shared hit is decoded and written to the local disk; a
    /// network result is written to the disk and, off the completion path, to the shared tier — with its
    /// `ImageCacheMetadata` (scale, HTTP validators and freshness), so `.useHTTPCache` works across workers.
    /// Values carry their full cache key, so a hash collision is a miss. The tier's failures are misses (it
    /// logs and counts them): a request never fails because of it. `removeImage` does not touch the tier.
    ///
    /// - Important: Thread-safe. Used by `ImageManager` requests only; the synchronous `getImage` reads memory
    ///   and disk.
    public var sharedTier: (any RemoteCacheTier)? {
        get { sharedSlot.tier.withLock { $0 } }
        set { sharedSlot.tier.withLock { $0 = newValue } }
    }

    /// Blocks until the shared-tier writes and removals handed over so far are answered, or `timeout` seconds
    /// pass; returns whether they all were. Call it before a short-lived process exits (a CLI run, a batch job)
    /// so its images reach the shared tier.
    @discardableResult
    public func waitForPendingSharedWrites(timeout: Double = 10) -> Bool {
        let deadline = DispatchTime.now() + timeout
        return sharedSlot.pendingWrites.wait(timeout: deadline) == .success
            && sharedSlot.pendingRemovals.wait(timeout: deadline) == .success
    }

    /// Removes `key` from the shared tier, off the caller's path and without blocking a thread: once the writes
    /// of that key handed to the tier so far are answered (so one still in flight cannot land after the
    /// removal; at once when there are none), or after `timeout` seconds (default 10) when one of them hangs.
    /// Writes of other keys are not waited for. Does nothing without a tier. `waitForPendingSharedWrites` waits
    /// for it too.
    ///
    /// For a value that must not spread (bytes that turned out not to be an image): the tier serves every
    /// process of a fleet.
    ///
    /// - Important: Thread-safe; returns at once.
    public func removeFromSharedTier(forKey key: String, timeout: Double = 10) {
        guard let tier = sharedTier else { return }
        let removals = sharedSlot.pendingRemovals
        removals.enter()
        sharedSlot.afterWrites(ofKey: key, timeout: timeout) {
            tier.removeValue(forKey: key) { _ in removals.leave() }
        }
    }

    /// Writes `data` and its metadata to the shared tier, off the caller's path (the envelope is built on a
    /// utility queue). Does nothing without a tier.
    func storeInSharedTier(_ data: Data, forKey key: String, metadata: ImageCacheMetadata) {
        guard let tier = sharedTier else { return }
        let slot = sharedSlot
        let token = slot.writeStarted(forKey: key)
        DispatchQueue.global(qos: .utility).async {
            let envelope: Data
            do { envelope = try SharedTierEnvelope.encode(data, key: key, metadata: metadata) } catch {
                WebImageLog.logger.warning("shared tier entry not encoded", metadata: ["key": "\(key)", "error": "\(error)"])
                slot.writeEnded(forKey: key, token: token)
                return
            }
            tier.setValue(envelope, forKey: key, timeToLive: nil) { _ in slot.writeEnded(forKey: key, token: token) }
        }
    }

    /// The shared tier's bytes and metadata for `key`, or `nil` (a miss, a failure, an entry of another key or
    /// an unreadable envelope — the last two logged).
    func sharedEntry(forKey key: String, completion: @escaping @Sendable (Data?, ImageCacheMetadata) -> Void) {
        guard let tier = sharedTier else { return completion(nil, ImageCacheMetadata()) }
        tier.value(forKey: key) { envelope in
            guard let envelope else { return completion(nil, ImageCacheMetadata()) }
            guard let entry = SharedTierEnvelope.decode(envelope, key: key) else {
                WebImageLog.logger.warning("unreadable shared tier entry ignored", metadata: ["key": "\(key)"])
                return completion(nil, ImageCacheMetadata())
            }
            completion(entry.data, entry.metadata)
        }
    }
}

/// How an image travels through the shared tier: `WIS1`, the cache key, the metadata (JSON), the bytes.
///
/// ```
/// "WIS1" | u32 key length | key (UTF-8) | u32 metadata length | metadata JSON | image bytes   (big-endian)
/// ```
/// The key lets a reader reject an entry of another key (a hash collision, a misconfigured namespace).
enum SharedTierEnvelope {
    static let magic: [UInt8] = Array("WIS1".utf8)

    static func encode(_ data: Data, key: String, metadata: ImageCacheMetadata) throws -> Data {
        let keyBytes = Array(key.utf8)
        let meta = try metadata.encoded()
        var out = Data(capacity: 12 + keyBytes.count + meta.count + data.count)
        out.append(contentsOf: magic)
        append(UInt32(keyBytes.count), to: &out)
        out.append(contentsOf: keyBytes)
        append(UInt32(meta.count), to: &out)
        out.append(meta)
        out.append(data)
        return out
    }

    /// The bytes and metadata, or `nil` when `envelope` is malformed or belongs to another key. The image bytes
    /// are copied once (into a `Data` indexed from 0); the envelope itself is read in place.
    static func decode(_ envelope: Data, key: String) -> (data: Data, metadata: ImageCacheMetadata)? {
        let start = envelope.startIndex
        guard envelope.count >= 12, envelope.prefix(4).elementsEqual(magic) else { return nil }
        var offset = 4
        guard let keyLength = readLength(envelope, &offset), envelope.count - offset >= keyLength,
              envelope[start + offset..<start + offset + keyLength].elementsEqual(key.utf8) else { return nil }
        offset += keyLength
        guard let metaLength = readLength(envelope, &offset), envelope.count - offset >= metaLength,
              let metadata = ImageCacheMetadata.decode(envelope.subdata(in: start + offset..<start + offset + metaLength))
        else { return nil }
        offset += metaLength
        return (envelope.subdata(in: start + offset..<envelope.endIndex), metadata)
    }

    private static func append(_ value: UInt32, to data: inout Data) {
        withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
    }

    /// The big-endian u32 at `offset` (from the start of `bytes`), advancing `offset`; `nil` past the end.
    private static func readLength(_ bytes: Data, _ offset: inout Int) -> Int? {
        guard bytes.count - offset >= 4 else { return nil }
        let from = bytes.startIndex + offset
        let value = bytes[from..<from + 4].reduce(0) { ($0 << 8) | Int($1) }
        offset += 4
        return value
    }
}
