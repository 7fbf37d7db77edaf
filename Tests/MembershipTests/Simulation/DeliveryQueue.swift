@testable import Membership

/// The simulator's in-flight messages: a binary min-heap ordered by delivery time, then by send
/// order, so equal times deliver in the order sent and every run is identical.
struct DeliveryQueue: Sendable {
    struct Delivery: Sendable {
        let time: Duration
        let order: UInt64
        let from: Int
        let to: Int
        let message: GossipMessage
    }

    private var heap: [Delivery] = []
    private var nextOrder: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    var earliest: Duration? { heap.first?.time }

    mutating func push(time: Duration, from: Int, to: Int, message: GossipMessage) {
        heap.append(Delivery(time: time, order: nextOrder, from: from, to: to, message: message))
        nextOrder += 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Delivery? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, precedes(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, precedes(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return top
    }

    private func precedes(_ a: Delivery, _ b: Delivery) -> Bool {
        a.time != b.time ? a.time < b.time : a.order < b.order
    }
}
