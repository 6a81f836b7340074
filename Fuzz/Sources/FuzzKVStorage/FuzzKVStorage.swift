// libFuzzer target: KVStorage and DiskCache opened on garbage.
//
// Input layout: byte 0 is the mode, the rest is the payload.
//   mode & 3 == 0: the payload is `manifest.sqlite`
//   mode & 3 == 1: the payload is `manifest.sqlite-wal` beside a valid empty manifest
//   mode & 3 == 2: the payload is `manifest.sqlite`, and its first 64 bytes are also the value files
//                  `data/f1`, `data/f2` and `data/f3` (the names the seed manifests reference)
//   mode & 3 == 3: like 0, plus a stray `tmp/` file and a `trash/` file
//   mode & 4: open a `DiskCache` instead of a bare `KVStorage`
//   mode & 8: the storage type is `.sqlite` (else `.mixed`)
// Then a fixed script of reads, writes, removals and trims runs. Every call may throw a `KVCacheError`; none
// may trap, trip a sanitizer, or touch a file outside the store folder (a sentinel file beside it must
// survive: a manifest row whose filename is `../sentinel` must not reach it).
//
// Seeds: run with WEBIMAGE_FUZZ_WRITE_SEEDS=<dir> to write valid manifests (inline and file entries) to
// <dir> and exit; `make fuzz` does this first.
import Foundation
import Logging
import WebImage
#if canImport(Glibc)
import Glibc
#endif

/// Where the per-input folders go: tmpfs when there is one (SQLite's WAL shared memory works there).
private let scratchRoot: String = {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDirectory), isDirectory.boolValue,
       access("/dev/shm", W_OK) == 0 {
        return "/dev/shm"
    }
    return NSTemporaryDirectory()
}()

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutableRawPointer?, _ argv: UnsafeMutableRawPointer?) -> CInt {
    // Recoveries from corrupt manifests are logged as errors: expected here, and slow on stderr.
    LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
    if let seedFolder = ProcessInfo.processInfo.environment["WEBIMAGE_FUZZ_WRITE_SEEDS"] {
        do {
            try writeSeeds(to: seedFolder)
        } catch {
            FileHandle.standardError.write(Data("FuzzKVStorage: cannot write seeds to \(seedFolder): \(error)\n".utf8))
            exit(1)
        }
        exit(0)
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKVStorage(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let mode = start[0]
    let payload = Data(UnsafeBufferPointer(start: start + 1, count: count - 1))
    let root = makeScratchFolder()
    defer { removeTree(root) }
    let store = root + "/store"
    let sentinel = root + "/sentinel"
    let sentinelBytes = Data("sentinel".utf8)
    do {
        try sentinelBytes.write(to: URL(fileURLWithPath: sentinel))
        for folder in ["", "/data", "/tmp", "/trash"] {
            try FileManager.default.createDirectory(atPath: store + folder, withIntermediateDirectories: true)
        }
        switch mode & 3 {
        case 1:
            try writeEmptyManifest(in: store)
            try payload.write(to: URL(fileURLWithPath: store + "/manifest.sqlite-wal"))
        case 2:
            try payload.write(to: URL(fileURLWithPath: store + "/manifest.sqlite"))
            for name in ["f1", "f2", "f3"] {
                try payload.prefix(64).write(to: URL(fileURLWithPath: store + "/data/" + name))
            }
        case 3:
            try payload.write(to: URL(fileURLWithPath: store + "/manifest.sqlite"))
            try payload.prefix(16).write(to: URL(fileURLWithPath: store + "/tmp/123-1"))
            try payload.prefix(16).write(to: URL(fileURLWithPath: store + "/trash/123-1-f1"))
        default:
            try payload.write(to: URL(fileURLWithPath: store + "/manifest.sqlite"))
        }
    } catch {
        fatalError("FuzzKVStorage: cannot prepare \(root): \(error)")
    }
    if mode & 4 != 0 {
        exerciseDiskCache(at: store)
    } else {
        exerciseStorage(at: store, type: mode & 8 != 0 ? .sqlite : .mixed)
    }
    guard let after = FileManager.default.contents(atPath: sentinel), after == sentinelBytes else {
        fatalError("FuzzKVStorage: a file outside the store folder was changed or removed")
    }
    return 0
}

/// Opens a bare KVStorage and runs the script. Errors are the expected outcome for garbage.
private func exerciseStorage(at path: String, type: KVStorage.StorageType) {
    let storage: KVStorage
    do {
        storage = try KVStorage(path: path, type: type)
    } catch {
        return
    }
    defer { storage.close() }
    let keys = ["k1", "k2", "k3", "missing"]
    attempt { _ = try storage.itemsCount() }
    attempt { _ = try storage.itemsSize() }
    for key in keys {
        attempt { _ = try storage.containsItem(forKey: key) }
        attempt { _ = try storage.itemInfo(forKey: key) }
        attempt { _ = try storage.item(forKey: key) }
    }
    attempt { _ = try storage.items(forKeys: keys) }
    attempt { _ = try storage.setExtendedData(Data([1, 2, 3]), forKey: "k1") }
    attempt { try storage.save(key: "k2", value: Data(repeating: 7, count: 100), filename: "f2") }
    attempt { try storage.save(key: "new", value: Data(repeating: 9, count: 10)) }
    attempt { try storage.removeItem(forKey: "k3") }
    attempt { try storage.removeItems(largerThan: 1_000) }
    attempt { try storage.removeItems(earlierThan: Date(timeIntervalSince1970: 1)) }
    attempt { try storage.removeItems(toFitSize: 50) }
    attempt { try storage.removeItems(toFitCount: 1) }
    attempt { _ = try storage.item(forKey: "new") }
    attempt { try storage.removeAllItems() }
    attempt { _ = try KVStorage.emptyTrash(atPath: path) }
}

/// Opens a DiskCache (the thread-safe layer, with its own trash and trim) and runs a shorter script.
private func exerciseDiskCache(at path: String) {
    let cache: DiskCache
    do {
        cache = try DiskCache(path: path, inlineThreshold: 32)
    } catch {
        return
    }
    for key in ["k1", "k2", "k3"] {
        attempt { _ = try cache.object(forKey: key) }
        attempt { _ = try cache.entry(forKey: key) }
        attempt { _ = try cache.extendedData(forKey: key) }
    }
    attempt { try cache.setObject(Data(repeating: 1, count: 100), forKey: "k1", extendedData: Data([1])) }
    attempt { try cache.setObject(Data(repeating: 2, count: 8), forKey: "k2") }
    attempt { try cache.removeObject(forKey: "k3") }
    attempt { _ = try cache.totalCount() }
    attempt { _ = try cache.totalCost() }
    attempt { try cache.trim(toCount: 1) }
    attempt { try cache.trim(toCost: 10) }
    attempt { try cache.trim(toAge: 0) }
    attempt { try cache.removeAllObjects() }
}

/// Runs `body`; a thrown error (a `KVCacheError`) is the expected outcome for garbage and is dropped on purpose.
private func attempt(_ body: () throws -> Void) {
    do {
        try body()
    } catch {
        _ = error
    }
}

private func writeEmptyManifest(in folder: String) throws {
    let storage = try KVStorage(path: folder, type: .mixed)
    storage.close()
}

/// Valid manifests with inline entries, file entries (`f1`, `f2`, `f3`) and extended data, one per mode.
private func writeSeeds(to folder: String) throws {
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for (index, mode) in ([0, 2, 3, 4, 8, 6] as [UInt8]).enumerated() {
        let root = makeScratchFolder()
        defer { removeTree(root) }
        let storage = try KVStorage(path: root, type: .mixed)
        try storage.save(key: "k1", value: Data(repeating: 1, count: 64), filename: "f1", extendedData: Data([9, 9]))
        try storage.save(key: "k2", value: Data(repeating: 2, count: 64), filename: "f2")
        try storage.save(key: "k3", value: Data(repeating: 3, count: 20), extendedData: Data("etag".utf8))
        if index % 2 == 0 { try storage.save(key: "k4", value: Data(repeating: 4, count: 64), filename: "f3") }
        _ = try storage.item(forKey: "k3")
        storage.close()
        guard let manifest = FileManager.default.contents(atPath: root + "/manifest.sqlite") else {
            throw KVCacheError.invalidArgument("no manifest written in \(root)")
        }
        try (Data([mode]) + manifest).write(to: URL(fileURLWithPath: folder + "/seed-\(index)"))
    }
}

private func makeScratchFolder() -> String {
    var template = Array((scratchRoot + "/wi-fuzz-kv-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("FuzzKVStorage: mkdtemp failed, errno \(errno)") }
    return String(cString: made)
}

/// Removes a scratch folder. A DiskCache's background trash sweep may still be removing files in it, so a
/// failed removal is retried a few times before it counts as a harness failure.
private func removeTree(_ path: String) {
    var lastError: (any Error)?
    for _ in 0..<5 {
        do {
            try FileManager.default.removeItem(atPath: path)
            return
        } catch {
            lastError = error
        }
    }
    fatalError("FuzzKVStorage: cannot remove \(path): \(String(describing: lastError))")
}
