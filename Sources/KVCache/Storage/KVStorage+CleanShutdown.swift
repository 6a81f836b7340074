import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Clean shutdown: per-instance liveness that the kernel keeps, in `<path>/instances`.
//
//   bytes 0..<64     header: "KVI1 " + this boot's id (/proc/sys/kernel/random/boot_id), written by the
//                    exclusive opener once its cleanup is done
//   byte 64 + i      slot i: "o" (an instance opened it and has not closed) or "." (free / closed cleanly)
//
// Each open instance owns one slot: it holds an open-file-description lock (`fcntl(F_OFD_SETLK)`, Linux
// ≥ 3.15) on the slot's byte through its own descriptor, writes "o" before it can write anything to the
// store and "." at `close()`, then closes the descriptor. The kernel drops an OFD lock when its description
// is closed, the process killed by SIGKILL included, so for the exclusive opener (the one holding `<path>/lock`
// exclusively) a slot is
//   - "o" and locked: an instance still open elsewhere (one waiting in the recovery protocol, which drops its
//     `flock` on `lock` but never its slot: see KVStorage+Recovery.swift);
//   - "o" and not locked: an instance that died without `close()` — an unclean shutdown;
//   - ".": free.
// No counter is kept, so none can be reset or lost by an opener that races a waiting instance (the defect of
// the instance count this replaces, `KVCacheInstanceCountReviewTests`). The exclusive opener runs the crash
// cleanup (KVStorage+Cleanup.swift) and, on a manifest of at most 128 MB (`quickCheckPageLimit`), `PRAGMA
// quick_check` iff some slot is dead, the header is missing, foreign (a new folder, or one last opened by a
// version that kept a count in `lock`: unclean once) or another boot's (below), `lock` still holds a count above 0 (an instance of an
// older version is open or died), or the manifest was missing or recreated. Only after the cleanup succeeded
// does it mark the dead slots "." (a crash during the cleanup leaves them dead: the next exclusive opener
// cleans up again). An instance that waited through a recovery and got the folder to itself does the same.
// Openers that are not exclusive reap dead slots first (`reapDead`, `KVCacheDeadWriterLeakReviewTests`): beside
// a long-running instance the exclusive open may never come, and each killed writer would keep its slot and
// its temporary (a whole value outside every total) for as long as that instance lives, until 65,536 deaths
// locked every new opener out. Such an opener locks the dead slot, removes the temporaries named with its
// slot's prefix (`temporaryPrefix`), marks it ".", and, once its manifest is open, works off the intent
// journal under `write.lock` (KVStorage+IntentJournal.swift): what the dead writers were moving. Deaths reaped
// that way get no open-time `quick_check` (SQLite's WAL recovery makes a process kill harmless to the
// manifest; damage is met by the statement that reads it). After a clean
// shutdown the open reads one small file (a byte per instance ever open at once) and tests no lock: O(1).
// A header of another boot means the machine restarted since the last exclusive open: whatever the slots
// say, the shutdown counts as unclean and the cleanup scans every row and file. Without `syncsFiles` neither
// the "o" of a slot nor the intent journal is fsynced, so a power loss or an OS crash can bring a slot back
// as "." (its clean close long before) along with value files and commits that never reached the disk
// (`KVCachePowerLossSlotReviewTests`); a clean reboot costs one full scan per store per boot.
// The file is read up to `maxSlots` slots (`readBounded`): a larger one (damage: a stray `truncate`, a
// file-system fault) is never read whole; the exclusive opener takes it for a foreign header (a full scan)
// and cuts it back to the bound after its cleanup (`KVCacheHugeBookkeepingFileReviewTests`).
// Kernels without OFD locks (EINVAL) get no slot: every exclusive open then cleans up (correct, slower).

extension KVStorage {
    /// The largest manifest (in 4 KB pages: 128 MB) the open-time `PRAGMA quick_check` after an unclean
    /// shutdown reads whole (about 40 ms of CPU). SQLite 3.40's check cannot be interrupted part-way (its
    /// progress handler runs between opcodes, and the check is one opcode), so a larger manifest is not
    /// checked at open: SQLite's WAL recovery already makes a process crash harmless to it, and damage is
    /// met by the statement that reads the damaged page, which the corruption path handles.
    static let quickCheckPageLimit: Int64 = 32_768

    /// Open-time bookkeeping observed by tests: whether the last open ran `quick_check` and the full crash
    /// cleanup.
    struct OpenReport: Equatable {
        var previousShutdownWasClean = false
        var ranQuickCheck = false
        var ranCrashCleanup = false
    }

    /// Whether `<path>/lock` holds an open-instance count above 0, written by an older version of this code
    /// (one of its instances is open, or died).
    static func legacyCountIsPositive(_ lockDescriptor: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(lockDescriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return false }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return (Int(text) ?? 1) != 0
    }

    /// Empties `<path>/lock` (the exclusive opener after its cleanup): an older version opening the folder
    /// later finds no count and checks it.
    func clearLegacyCount() throws(KVCacheError) {
        var status = stat()
        guard fstat(lockDescriptor, &status) == 0 else { throw .io(errno: errno, operation: "fstat", path: path + "/lock") }
        guard status.st_size > 0 else { return }
        guard ftruncate(lockDescriptor, 0) == 0 else { throw .io(errno: errno, operation: "truncate", path: path + "/lock") }
    }

    /// Whether the open-time `quick_check` reads this manifest (see `quickCheckPageLimit`).
    static func isSmallEnoughToCheckAtOpen(_ database: SQLiteDatabase) throws(KVCacheError) -> Bool {
        let select = try database.prepare("PRAGMA page_count")
        defer { select.reset() }
        return try select.step() && select.int64(0) <= quickCheckPageLimit
    }

    /// `PRAGMA quick_check`'s rows, or `["ok"]` (logged) for a manifest above `quickCheckPageLimit`.
    static func openTimeQuickCheck(_ database: SQLiteDatabase) throws(KVCacheError) -> [String] {
        guard try isSmallEnoughToCheckAtOpen(database) else {
            kvLog.debug("KVStorage at \(database.path): manifest above \(quickCheckPageLimit) pages: no quick_check at open")
            return ["ok"]
        }
        return try database.textRows("PRAGMA quick_check")
    }

    /// Empties `tmp/` (the exclusive opener after a clean shutdown: temporaries only an older version or a
    /// killed writer can have left).
    func removeTemporaries() throws(KVCacheError) {
        for name in try io.contentsOfDirectory(tmpPath) { try io.unlink(tmpPath + "/" + name) }
    }
}

/// The instance slots of one folder, `<path>/instances` (see "Clean shutdown" in KVStorage+CleanShutdown.swift),
/// as one instance sees them: its own descriptor (its OFD lock) and its slot.
struct InstanceSlots {
    static let headerSize = 64
    static let magic = Array("KVI1 ".utf8)
    static let open = UInt8(ascii: "o")
    static let free = UInt8(ascii: ".")
    // F_OFD_GETLK / F_OFD_SETLK (Linux, <bits/fcntl-linux.h>; not exported to Swift without _GNU_SOURCE).
    static let getLock: Int32 = 36
    static let setLock: Int32 = 37
    /// The most slots the file holds (instances open at once on one folder); a larger file is damaged.
    static let maxSlots = 65_536
    /// The largest size of a sound slots file.
    static var maxSize: Int { headerSize + maxSlots }

    /// What the exclusive opener found.
    struct Scan: Equatable {
        /// The header is this format's (else: a new folder or one of an older version).
        var headerValid = false
        /// The header names another boot (the machine restarted since the last exclusive open).
        var otherBoot = false
        /// Slots marked open whose lock nobody holds: instances that died without `close()`.
        var dead: [Int] = []
        /// Slots marked open and locked: instances open elsewhere.
        var live = 0
        /// The file is larger than `maxSize` (damaged): treated like a foreign header, cut back after the cleanup.
        var oversized = false
    }

    let path: String
    let descriptor: Int32
    /// This instance's slot, or `nil` (none taken yet, released, or no OFD locks on this kernel).
    private(set) var slot: Int?

    /// Opens (creating if needed) the slots file.
    init(path: String) throws(KVCacheError) {
        self.path = path
        descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .io(errno: errno, operation: "open instance slots", path: path) }
    }

    /// This boot's id, or `nil` when the kernel does not tell (then every header counts as another boot's:
    /// every exclusive open scans the whole store).
    static let bootID: [UInt8]? = {
        let fd = Glibc.open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(fd, &buffer, buffer.count)
        guard count >= 32 else { return nil }
        return Array(buffer[..<count].filter { $0 != UInt8(ascii: "\n") }.prefix(headerSize - magic.count - 1))
    }()

    /// The file (a header and a byte per slot), up to `maxSize` bytes; `oversized` when it is larger.
    func contents() throws(KVCacheError) -> (bytes: [UInt8], oversized: Bool) {
        try Self.readBounded(descriptor, limit: Self.maxSize, path: path)
    }

    /// The bytes of the file open as `descriptor` (`path` names it in errors), or, for a file larger than
    /// `limit` (damaged: `st_size` is never allocated unbounded), its first `limit` bytes and `oversized`.
    static func readBounded(_ descriptor: Int32, limit: Int, path: String) throws(KVCacheError) -> (bytes: [UInt8], oversized: Bool) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .io(errno: errno, operation: "fstat", path: path) }
        let oversized = status.st_size > off_t(limit)
        var bytes = [UInt8](repeating: 0, count: oversized ? limit : max(0, Int(status.st_size)))
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .io(errno: errno, operation: "read", path: path) }
            if count == 0 { break }
            offset += count
        }
        return (Array(bytes[..<offset]), oversized)
    }

    /// Runs `fcntl(command)` with a write lock (or `type`) on slot `index`'s byte; returns the lock back
    /// (for `getLock`) or `nil` with `errno` set.
    private func lockCall(_ command: Int32, _ index: Int, type: Int32 = F_WRLCK) -> Glibc.flock? {
        var lock = Glibc.flock(l_type: Int16(type), l_whence: Int16(SEEK_SET),
                               l_start: off_t(Self.headerSize + index), l_len: 1, l_pid: 0)
        while true {
            if fcntl(descriptor, command, &lock) == 0 { return lock }
            if errno != EINTR { return nil }
        }
    }

    /// Whether some other description holds slot `index`'s lock.
    func isLocked(_ index: Int) throws(KVCacheError) -> Bool {
        guard let lock = lockCall(Self.getLock, index) else {
            throw .io(errno: errno, operation: "fcntl(F_OFD_GETLK)", path: path)
        }
        return lock.l_type != Int16(F_UNLCK)
    }

    /// Classifies every slot but this instance's own (the exclusive opener, or a recovering instance that got
    /// the folder to itself).
    func scan() throws(KVCacheError) -> Scan {
        let (bytes, oversized) = try contents()
        var scan = Scan()
        scan.oversized = oversized
        guard bytes.count >= Self.headerSize else { return scan }
        scan.headerValid = !oversized && Array(bytes[..<Self.magic.count]) == Self.magic
        if scan.headerValid {
            let id = bytes[Self.magic.count..<Self.headerSize].prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") }
            scan.otherBoot = Self.bootID.map { Array(id) != $0 } ?? true
        }
        for index in 0..<(bytes.count - Self.headerSize) where bytes[Self.headerSize + index] == Self.open && index != slot {
            if try isLocked(index) { scan.live += 1 } else { scan.dead.append(index) }
        }
        return scan
    }

    private func write(_ bytes: [UInt8], at offset: Int) throws(KVCacheError) {
        while true {
            let count = pwrite(descriptor, bytes, bytes.count, off_t(offset))
            if count == bytes.count { return }
            if count < 0 && errno == EINTR { continue }
            throw .io(errno: count < 0 ? errno : EIO, operation: "write instance slots", path: path)
        }
    }

    /// Takes a free slot: locks its byte, then marks it open ("o"). A slot marked open is skipped even when
    /// its lock is free (a dead instance's: freed only after its cleanup, by the exclusive opener or `reapDead`). With `sync`, the
    /// mark is fsynced (power-loss durability of the unclean-shutdown evidence). Returns `false`, taking
    /// nothing, on a kernel without OFD locks; throws `EUSERS` when all `maxSlots` are marked open.
    mutating func claim(sync: Bool) throws(KVCacheError) -> Bool {
        precondition(slot == nil)
        let bytes = try contents().bytes
        var index = 0
        while index < Self.maxSlots {
            let offset = Self.headerSize + index
            if offset < bytes.count && bytes[offset] == Self.open {
                index += 1
                continue
            }
            guard lockCall(Self.setLock, index) != nil else {
                let code = errno
                if code == EAGAIN || code == EACCES {
                    index += 1
                    continue
                }
                if code == EINVAL {
                    kvLog.warning("KVStorage at \(path): no OFD locks (EINVAL): every first open will clean up")
                    return false
                }
                throw .io(errno: code, operation: "fcntl(F_OFD_SETLK)", path: path)
            }
            // Marked open meanwhile by an instance that has died since: not ours to reuse.
            var current: UInt8 = 0
            if pread(descriptor, &current, 1, off_t(offset)) == 1 && current == Self.open {
                _ = lockCall(Self.setLock, index, type: F_UNLCK)
                index += 1
                continue
            }
            slot = index
            try write([Self.open], at: offset)
            if sync && fsync(descriptor) != 0 { throw .io(errno: errno, operation: "fsync", path: path) }
            return true
        }
        // Every slot is marked open: more instances than a sound store ever has (or dead ones piling up).
        throw .io(errno: EUSERS, operation: "claim an instance slot (all \(Self.maxSlots) marked open)", path: path)
    }

    /// The prefix of the names of the temporaries an instance holding slot `index` writes (see
    /// `KVStorage.uniqueName()`), so that what a dead instance left in `tmp/` is known by its slot.
    static func temporaryPrefix(_ index: Int) -> String { "s\(index)-" }

    /// Frees, beside live instances, the slots of instances that died without `close()` (marked open, lock
    /// free): locks each, checks it is still marked open (another reaper may have freed it, and a new
    /// instance taken it, meanwhile), calls `cleanUp` with it, marks it free and unlocks it. A slot whose lock
    /// another instance holds is live and skipped. Returns the slots freed (none on a kernel without OFD locks).
    /// Run by an opener that is not exclusive (the exclusive one has its own scan): no exclusive opener runs
    /// meanwhile, as both hold `<path>/lock`.
    func reapDead(_ cleanUp: (Int) throws(KVCacheError) -> Void) throws(KVCacheError) -> Int {
        let bytes = try contents().bytes
        guard bytes.count > Self.headerSize else { return 0 }
        var reaped = 0
        for index in 0..<(bytes.count - Self.headerSize) where bytes[Self.headerSize + index] == Self.open && index != slot {
            guard lockCall(Self.setLock, index) != nil else {
                let code = errno
                if code == EAGAIN || code == EACCES { continue } // a live instance's
                if code == EINVAL { return reaped }
                throw .io(errno: code, operation: "fcntl(F_OFD_SETLK)", path: path)
            }
            defer { _ = lockCall(Self.setLock, index, type: F_UNLCK) }
            var current: UInt8 = 0
            guard pread(descriptor, &current, 1, off_t(Self.headerSize + index)) == 1, current == Self.open else { continue }
            try cleanUp(index)
            try write([Self.free], at: Self.headerSize + index)
            reaped += 1
        }
        return reaped
    }

    /// Marks `dead` slots free (after the cleanup they called for), cuts an oversized file back to `maxSize`
    /// and writes the header (this boot's id).
    func markCleanedUp(_ scan: Scan) throws(KVCacheError) {
        let (dead, headerValid, otherBoot) = (scan.dead, scan.headerValid, scan.otherBoot)
        for index in dead { try write([Self.free], at: Self.headerSize + index) }
        if scan.oversized && ftruncate(descriptor, off_t(Self.maxSize)) != 0 {
            throw .io(errno: errno, operation: "truncate instance slots", path: path)
        }
        guard !headerValid || otherBoot else { return }
        var header = Self.magic + (Self.bootID ?? Array("unknown".utf8))
        header += [UInt8](repeating: UInt8(ascii: " "), count: max(0, Self.headerSize - 1 - header.count))
        try write(Array(header.prefix(Self.headerSize - 1)) + [UInt8(ascii: "\n")], at: 0)
    }

    /// The clean close: marks the slot free, then closes the descriptor (which drops the lock). With
    /// `markFree` false, the slot stays marked open: the next exclusive opener cleans up.
    mutating func release(markFree: Bool) {
        if markFree, let slot {
            do {
                try write([Self.free], at: Self.headerSize + slot)
            } catch {
                kvLog.error("KVStorage: cannot record the clean shutdown (the next open cleans up): \(error)")
            }
        }
        slot = nil
        Glibc.close(descriptor)
    }
}

extension KVStorage {
    /// For tests: the open instances (slots marked open and locked) and the dead ones (marked open, not
    /// locked) of the folder at `path`, as a new exclusive opener would see them; `nil` without a slots file.
    static func _instanceSlots(atPath path: String) throws(KVCacheError) -> (open: Int, dead: Int)? {
        guard access(path + "/instances", F_OK) == 0 else { return nil }
        var slots = try InstanceSlots(path: path + "/instances")
        defer { slots.release(markFree: false) }
        let scan = try slots.scan()
        return (scan.live, scan.dead.count)
    }
}
