import Foundation

// Giving freed manifest pages back to the file system. SQLite keeps the pages of removed rows on its free list
// and reuses them, so without this a manifest never shrinks: after a trim from 36 MiB to 1 MiB the file stayed at
// 36 MiB (`KVCacheKeyCostTests`). A manifest made by this version has `auto_vacuum=INCREMENTAL` (set before its
// first table, KVStorage+Open.swift), and each trim ends with steps of `PRAGMA incremental_vacuum`, each one
// short write transaction under the store lock, while more than `vacuumMinimumFreePages` pages and more than an
// eighth of the file are free (a few free pages are kept: the next writes reuse them). The file itself shrinks
// when a checkpoint copies the vacuum's pages back. A manifest made before (auto_vacuum off) is left as it is.

extension KVStorage {
    /// Free pages one vacuum step gives back at most (1 MiB with 4 KiB pages): a step holds the lock about as
    /// long as a trim step.
    static let vacuumBatchPages: Int64 = 256
    /// Free pages kept for reuse: a manifest with no more free than this (or than an eighth of its pages) is
    /// not vacuumed.
    static let vacuumMinimumFreePages: Int64 = 64

    /// The free pages a vacuum would give back now: 0 when the manifest cannot shrink (made with auto_vacuum
    /// off) or holds at most `vacuumMinimumFreePages` free pages, or at most an eighth of its pages.
    func releasableFreePages() throws(KVCacheError) -> Int64 {
        try guarded { () throws(KVCacheError) -> Int64 in
            try reading { () throws(KVCacheError) -> Int64 in
                // 2 = INCREMENTAL; 1 = FULL (SQLite shrinks at each commit itself); 0 = NONE.
                guard try database.textRows("PRAGMA auto_vacuum").first == "2" else { return 0 }
                let free = Int64(try database.textRows("PRAGMA freelist_count").first ?? "") ?? 0
                let pages = Int64(try database.textRows("PRAGMA page_count").first ?? "") ?? 0
                guard free > Self.vacuumMinimumFreePages, free * 8 > pages else { return 0 }
                return free - Self.vacuumMinimumFreePages
            }
        }
    }

    /// Gives back up to `vacuumBatchPages` free pages of the manifest in one write transaction; returns whether
    /// more could be given back. Does nothing when `releasableFreePages()` is 0.
    func vacuumStep() throws(KVCacheError) -> Bool {
        let releasable = try releasableFreePages()
        guard releasable > 0 else { return false }
        let pages = min(releasable, Self.vacuumBatchPages)
        try guarded { () throws(KVCacheError) in
            try inWriteTransaction { () throws(KVCacheError) in
                try database.execute("PRAGMA incremental_vacuum(\(pages))")
            }
        }
        return releasable > pages
    }
}
