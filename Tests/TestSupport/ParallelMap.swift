import Dispatch
import Synchronization

/// `transform` applied to every element of `items` on all cores (`DispatchQueue.concurrentPerform`), the results in
/// the order of `items`. For corpus tests whose files are independent: on CI's two cores it halves their wall time.
/// `transform` runs on several threads at once, so it must not touch shared state without a lock, and must not call
/// `XCTAssert` (record what to check in its result and assert on the calling thread). The first error thrown (in the
/// order of `items`) is rethrown after every element has run.
public func parallelMap<Element: Sendable, Output: Sendable>(
    _ items: [Element], _ transform: @Sendable (Element) throws -> Output
) throws -> [Output] {
    let results = Mutex<[Result<Output, any Error>?]>(Array(repeating: nil, count: items.count))
    DispatchQueue.concurrentPerform(iterations: items.count) { index in
        let outcome = Result { try transform(items[index]) }
        results.withLock { $0[index] = outcome }
    }
    return try results.withLock { $0 }.map { try $0!.get() }
}
