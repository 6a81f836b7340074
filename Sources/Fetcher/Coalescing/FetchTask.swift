import Foundation

/// One transfer and the operations sharing it (coalesced identical requests). Each subscriber gets every
/// event; one that joins late gets the response and the body so far as one chunk first. The task ends when the
/// transfer ends or when its last subscriber leaves.
///
/// Confined to the network thread; owned by `FetchQueueCore`. Not Sendable.
final class FetchTask: TransferDelegate {
    enum Phase { case pending, running, done }

    let key: CoalescingKey
    let request: FetchRequest
    private(set) var subscribers: [FetchOperation] = []
    var phase = Phase.pending
    var priority: FetchPriority
    /// Insertion order, for FIFO/LIFO among equal priorities.
    let sequence: Int
    var transfer: Transfer?
    /// Called once when the transfer ends (not when the last subscriber leaves).
    var onComplete: ((FetchTask, Result<FetchResult, FetchError>) -> Void)?

    init(request: FetchRequest, key: CoalescingKey, sequence: Int) {
        self.request = request
        self.key = key
        self.priority = request.priority
        self.sequence = sequence
    }

    /// Adds a caller; while running, it is brought up to date first.
    func add(_ operation: FetchOperation) {
        subscribers.append(operation)
        priority = max(priority, operation.priority)
        guard phase == .running else { return }
        guard operation.markExecuting() else { return }
        if let transfer, let response = transfer.response {
            operation.deliver(response)
            if transfer.receivedCount > 0 {
                operation.deliver(chunk: transfer.bodySoFar, received: transfer.receivedCount,
                                  expected: response.expectedContentLength)
            }
        }
    }

    /// Removes a caller (it is not completed here). Returns whether none is left.
    func remove(_ operation: FetchOperation) -> Bool {
        subscribers.removeAll { $0 === operation }
        return subscribers.isEmpty
    }

    /// Marks subscribers executing as the transfer starts.
    func didStart(_ transfer: Transfer) {
        self.transfer = transfer
        phase = .running
        transfer.delegate = self
        for operation in subscribers { _ = operation.markExecuting() }
    }

    /// Completes every subscriber with `result` and forgets them.
    func finishAll(_ result: Result<FetchResult, FetchError>) {
        phase = .done
        transfer = nil
        let operations = subscribers
        subscribers.removeAll()
        for operation in operations { operation.finish(result) }
    }

    // MARK: TransferDelegate

    func transfer(_ transfer: Transfer, didReceive response: FetchResponse) {
        for operation in subscribers { operation.deliver(response) }
    }

    func transfer(_ transfer: Transfer, didReceive chunk: UnsafeRawBufferPointer) {
        guard subscribers.contains(where: \.wantsChunks) else { return }
        let data = Data(chunk)
        let expected = transfer.response?.expectedContentLength
        for operation in subscribers {
            operation.deliver(chunk: data, received: transfer.receivedCount, expected: expected)
        }
    }

    func transfer(_ transfer: Transfer, didCompleteWith result: Result<FetchResult, FetchError>) {
        onComplete?(self, result)
    }
}

@available(*, unavailable)
extension FetchTask: Sendable {}
