import Routing
import ShowroomWire

/// One broken rule found by a check.
public struct Violation: Sendable, Equatable, CustomStringConvertible {
    /// The rule, in a few words ("acknowledged room lost").
    public let rule: String
    /// What was found.
    public let detail: String
    public var description: String { "\(rule): \(detail)" }
}

/// The checks after a run, every fault healed and the cluster given time to settle.
enum Invariants {
    /// Every acknowledged room exists once, at its owner, with its successor holding the same
    /// record; acknowledged writes (versions, closes, chat numbers) survived; chat numbers rise
    /// from 1, with no more gaps than chat messages sent and not acknowledged.
    static func rooms(_ workload: RoomWorkload, _ cluster: SimulatedCluster) -> [Violation] {
        var violations: [Violation] = []
        let ring = OwnerRing(.coordinator, memberIDs: cluster.coordinatorIDs)
        for roomID in workload.roomIDs {
            guard let acknowledged = workload.acknowledged[roomID], acknowledged.created else { continue }
            let holders = ring.holders(of: roomID, count: 2)
            guard let room = cluster.room(roomID, at: holders[0]) else {
                violations.append(Violation(rule: "acknowledged room lost", detail: "\(roomID) is not at its owner \(holders[0])"))
                continue
            }
            if holders.count > 1, cluster.room(roomID, at: holders[1]) != room {
                let other = cluster.room(roomID, at: holders[1])
                violations.append(Violation(rule: "owner and successor differ", detail:
                    "\(roomID): \(holders[0]) v\(room.version), \(holders[1]) \(other.map { "v\($0.version)" } ?? "none")"))
            }
            if room.version < acknowledged.version {
                violations.append(Violation(rule: "acknowledged write lost", detail:
                    "\(roomID) is at v\(room.version), a client was answered v\(acknowledged.version)"))
            }
            if acknowledged.closed, room.state != .closed {
                violations.append(Violation(rule: "acknowledged close lost", detail: "\(roomID) is \(room.state)"))
            }
            let messages = cluster.messages(in: roomID, at: holders[0])
            let numbers = messages.map(\.sequence)
            if !chatNumbersHold(numbers, through: room.lastChatSequence, notAcknowledged: acknowledged.chatNotAcknowledged) {
                violations.append(Violation(rule: "chat numbers reused or skipped", detail:
                    "\(roomID): \(numbers) through #\(room.lastChatSequence), \(acknowledged.chatNotAcknowledged) sent and not acknowledged"))
            }
            for (number, text) in acknowledged.chat.sorted(by: { $0.key < $1.key }) {
                let held = messages.first { $0.sequence == number }
                if held?.text != text {
                    violations.append(Violation(rule: "acknowledged chat message lost", detail:
                        "\(roomID) #\(number) \"\(text)\" is \(held.map { "\"\($0.text)\"" } ?? "missing")"))
                }
            }
        }
        return violations
    }

    /// Whether a room's chat, held as `numbers` by a room whose last chat number is `last`, rises
    /// from 1 with no more numbers missing than chat messages sent to it and not acknowledged
    /// (`notAcknowledged`). A number may be missing only where such a message took it and died
    /// with its owner before any replica held it: its notice may have gone out, so the number is
    /// not given again.
    static func chatNumbersHold(_ numbers: [UInt64], through last: UInt64, notAcknowledged: Int) -> Bool {
        guard (numbers.first ?? 1) >= 1, zip(numbers, numbers.dropFirst()).allSatisfy({ $0 < $1 }),
              (numbers.last ?? 0) <= last else { return false }
        return last - UInt64(numbers.count) <= UInt64(max(0, notAcknowledged))
    }

    /// No chat number published twice for different messages (by any coordinator): viewers take
    /// a number they saw for that message, whichever coordinator published it.
    static func chatNotices(_ published: [PublishedChat]) -> [Violation] {
        var byNumber: [String: PublishedChat] = [:]
        var violations: [Violation] = []
        for chat in published {
            let key = "\(chat.room) #\(chat.sequence)"
            guard let earlier = byNumber[key] else {
                byNumber[key] = chat
                continue
            }
            if earlier.what != chat.what {
                violations.append(Violation(rule: "chat number reused", detail:
                    "\(key): \(earlier.what) (at \(earlier.coordinator)) and \(chat.what) (at \(chat.coordinator))"))
            }
        }
        return violations
    }

    /// No channel event number published twice for different events (by any coordinator), and
    /// none skipped within a series.
    static func channelEvents(_ published: [PublishedEvent]) -> [Violation] {
        var violations: [Violation] = []
        var byNumber: [String: String] = [:]
        var numbers: [String: Set<UInt64>] = [:]
        var seriesOrder: [String] = []
        for event in published {
            let series = "\(event.channel)/\(event.series)"
            let key = "\(series)-\(event.sequence)"
            if let earlier = byNumber[key], earlier != event.what {
                violations.append(Violation(rule: "channel event number reused", detail:
                    "\(key): \(earlier) and \(event.what) (at \(event.coordinator))"))
            }
            byNumber[key] = byNumber[key] ?? event.what
            if numbers[series] == nil { seriesOrder.append(series) }
            numbers[series, default: []].insert(event.sequence)
        }
        for series in seriesOrder {
            let held = numbers[series]!.sorted()
            if let last = held.last, held.count != Int(last), let first = held.first, first <= 1 {
                let missing = (1...last).filter { !numbers[series]!.contains($0) }
                violations.append(Violation(rule: "channel event number skipped", detail:
                    "\(series): \(missing.prefix(8).map(String.init).joined(separator: ","))"))
            }
        }
        return violations
    }
}
