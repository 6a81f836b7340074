import Foundation
import WebImageSync

/// The results read from the result cache's disk tier whose responses are still being written, by key, held weakly:
/// the next disk hit of a key shares those bytes instead of reading its own copy. The memory tier shares its bytes
/// by itself; a result it does not keep (over its cost limit, or evicted) was read from disk once per response, and
/// each client that did not read pinned its own copy (24 such clients of a 9 MiB result: 218 MiB).
///
/// - Important: Thread-safe. Each response holds its `Body` (`ImageServiceResponse.bodyOwner`) for as long as it
///   writes; the entry dies with the last one.
final class ServedBodies: Sendable {
    /// One shared result; alive while a response holds it.
    final class Body: Sendable {
        let result: ImageResult

        init(result: ImageResult) {
            self.result = result
        }
    }

    private struct Entry {
        weak var body: Body?
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// The result still being served for `key`, if any response holds it.
    func body(forKey key: String) -> Body? {
        entries.withLock { $0[key]?.body }
    }

    /// Registers `result` for `key` and returns its holder (dead entries are swept when the table grows).
    func register(_ result: ImageResult, forKey key: String) -> Body {
        let body = Body(result: result)
        entries.withLock { entries in
            if entries.count >= 64 { entries = entries.filter { $0.value.body != nil } }
            entries[key] = Entry(body: body)
        }
        return body
    }
}
