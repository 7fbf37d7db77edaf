// Pure: no I/O.
import Routing
import ShowroomWire

/// What a coordinator decides about 1v1 calls, which the call-signal nodes own: which joins and
/// leaves of a call's channel go to which call-signal node, and whether a call-signal node's
/// report of call events may be published.
public enum CallChannels {
    /// The most call events one report carries.
    public static let maxEventsPerReport = 1_000

    /// The joins and leaves among `activities` in 1v1 call channels (`call-<callee>-…`), for the
    /// call-signal node owning the callee (key `uid/<callee>` in `ring`), which watches the call's
    /// media; by node id, in id order. Other activities, other channels and calls whose owner the
    /// ring does not name are left out.
    public static func activitiesByOwner(_ activities: [RoomChannelActivity], ring: OwnerRing)
        -> [(owner: String, batch: SignalChannelActivities)] {
        var byOwner: [String: SignalChannelActivities] = [:]
        for activity in activities {
            let joined: Bool
            switch activity.type {
            case .broadcasterJoined, .audienceJoined: joined = true
            case .broadcasterLeft, .audienceLeft: joined = false
            default: continue
            }
            guard let callee = Names.callee(ofCallChannel: activity.channel), let owner = ring.owner(of: "uid/\(callee)") else { continue }
            byOwner[owner, default: SignalChannelActivities()].activities.append(SignalChannelActivity.with {
                $0.channel = activity.channel
                $0.uid = activity.uid
                $0.joined = joined
            })
        }
        return byOwner.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Checks a call-signal node's report of call events whole, before anything of it goes out:
    /// at most ``maxEventsPerReport`` events, each a call's start, connection or end (201–203)
    /// between two users, of a call whose id and channel name its callee, with its notice id and
    /// bounded strings.
    public static func validate(_ report: SignalCallEventReport) throws(ShowroomError) {
        guard report.events.count <= maxEventsPerReport else {
            throw .invalidArgument("a call event report carries at most \(maxEventsPerReport) events, not \(report.events.count)")
        }
        for event in report.events {
            guard (201...203).contains(event.eventType), event.caller != 0, event.callee != 0,
                  event.callID.hasPrefix("\(event.callee)-"), event.callID.utf8.count <= 64,
                  Names.callee(ofCallChannel: event.channel) == event.callee, event.channel.utf8.count <= 64,
                  event.noticeID == "\(event.callID)-\(event.eventType)",
                  event.endReason.utf8.count <= 32, event.nodeID.utf8.count <= 128 else {
                throw .invalidArgument("call event '\(event.noticeID.prefix(80))' is malformed (type, parties, call id, channel)")
            }
        }
    }
}
