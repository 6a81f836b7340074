import Foundation

extension DiskCache {
    /// Runs `work` on the cache's background queue and hands its result to `completion` there.
    func perform<T: Sendable>(
        _ work: @escaping @Sendable () throws(KVCacheError) -> T,
        completion: @escaping @Sendable (Result<T, KVCacheError>) -> Void
    ) {
        core.queue.async {
            do throws(KVCacheError) {
                completion(.success(try work()))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Runs `work` on the cache's background queue and awaits it (the caller's task is not blocked).
    func performAsync<T: Sendable>(_ work: @escaping @Sendable () throws(KVCacheError) -> T) async throws(KVCacheError) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, KVCacheError>, Never>) in
            perform(work) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    // MARK: Completion handlers (called on a background queue)

    /// `containsObject(forKey:)` in the background.
    public func containsObject(forKey key: String, completion: @escaping @Sendable (Result<Bool, KVCacheError>) -> Void) {
        perform({ () throws(KVCacheError) in try self.containsObject(forKey: key) }, completion: completion)
    }

    /// `object(forKey:)` in the background.
    public func object(forKey key: String, completion: @escaping @Sendable (Result<Data?, KVCacheError>) -> Void) {
        perform({ () throws(KVCacheError) in try self.object(forKey: key) }, completion: completion)
    }

    /// `setObject(_:forKey:extendedData:)` in the background.
    public func setObject(
        _ data: Data?, forKey key: String, extendedData: Data? = nil,
        completion: @escaping @Sendable (Result<Void, KVCacheError>) -> Void
    ) {
        perform({ () throws(KVCacheError) in try self.setObject(data, forKey: key, extendedData: extendedData) },
                completion: completion)
    }

    /// `removeObject(forKey:)` in the background.
    public func removeObject(forKey key: String, completion: @escaping @Sendable (Result<Void, KVCacheError>) -> Void) {
        perform({ () throws(KVCacheError) in try self.removeObject(forKey: key) }, completion: completion)
    }

    /// `removeAllObjects(progress:)` in the background; `progress` and `completion` run on that queue.
    public func removeAllObjects(
        progress: (@Sendable (Int, Int) -> Void)? = nil,
        completion: @escaping @Sendable (Result<Void, KVCacheError>) -> Void
    ) {
        perform({ () throws(KVCacheError) in try self.removeAllObjects(progress: progress) }, completion: completion)
    }

    /// `totalCount()` in the background.
    public func totalCount(completion: @escaping @Sendable (Result<Int, KVCacheError>) -> Void) {
        perform({ () throws(KVCacheError) in try self.totalCount() }, completion: completion)
    }

    /// `totalCost()` in the background.
    public func totalCost(completion: @escaping @Sendable (Result<Int64, KVCacheError>) -> Void) {
        perform({ () throws(KVCacheError) in try self.totalCost() }, completion: completion)
    }

    /// `trim(toCount:)` in the background.
    public func trim(toCount count: Int, completion: @escaping @Sendable (Result<Void, KVCacheError>) -> Void) {
        perform({ () throws(KVCacheError) in try self.trim(toCount: count) }, completion: completion)
    }

    /// `trim(toCost:)` in the background.
    public func trim(toCost cost: Int64, completion: @escaping @Sendable (Result<Void, KVCacheError>) -> Void) {
        perform({ () throws(KVCacheError) in try self.trim(toCost: cost) }, completion: completion)
    }

    /// `trim(toAge:)` in the background.
    public func trim(toAge age: Double, completion: @escaping @Sendable (Result<Void, KVCacheError>) -> Void) {
        perform({ () throws(KVCacheError) in try self.trim(toAge: age) }, completion: completion)
    }

    // MARK: async/await

    /// `containsObject(forKey:)` off the caller's thread.
    public func containsObject(forKey key: String) async throws(KVCacheError) -> Bool {
        try await performAsync { () throws(KVCacheError) in try self.containsObject(forKey: key) }
    }

    /// `object(forKey:)` off the caller's thread.
    public func object(forKey key: String) async throws(KVCacheError) -> Data? {
        try await performAsync { () throws(KVCacheError) in try self.object(forKey: key) }
    }

    /// `setObject(_:forKey:extendedData:)` off the caller's thread.
    public func setObject(_ data: Data?, forKey key: String, extendedData: Data? = nil) async throws(KVCacheError) {
        try await performAsync { () throws(KVCacheError) in try self.setObject(data, forKey: key, extendedData: extendedData) }
    }

    /// `removeObject(forKey:)` off the caller's thread.
    public func removeObject(forKey key: String) async throws(KVCacheError) {
        try await performAsync { () throws(KVCacheError) in try self.removeObject(forKey: key) }
    }

    /// `removeAllObjects(progress:)` off the caller's thread.
    public func removeAllObjects(progress: (@Sendable (Int, Int) -> Void)? = nil) async throws(KVCacheError) {
        try await performAsync { () throws(KVCacheError) in try self.removeAllObjects(progress: progress) }
    }

    /// `totalCount()` off the caller's thread.
    public func totalCount() async throws(KVCacheError) -> Int {
        try await performAsync { () throws(KVCacheError) in try self.totalCount() }
    }

    /// `totalCost()` off the caller's thread.
    public func totalCost() async throws(KVCacheError) -> Int64 {
        try await performAsync { () throws(KVCacheError) in try self.totalCost() }
    }

    /// `trim(toCount:)` off the caller's thread.
    public func trim(toCount count: Int) async throws(KVCacheError) {
        try await performAsync { () throws(KVCacheError) in try self.trim(toCount: count) }
    }

    /// `trim(toCost:)` off the caller's thread.
    public func trim(toCost cost: Int64) async throws(KVCacheError) {
        try await performAsync { () throws(KVCacheError) in try self.trim(toCost: cost) }
    }

    /// `trim(toAge:)` off the caller's thread.
    public func trim(toAge age: Double) async throws(KVCacheError) {
        try await performAsync { () throws(KVCacheError) in try self.trim(toAge: age) }
    }
}
