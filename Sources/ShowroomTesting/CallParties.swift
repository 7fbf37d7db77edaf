import Foundation
import ShowroomKit
import Synchronization

/// What a CallClient reported, for waits with deadlines.
public final class CallEventLog: Sendable {
    private let events = Mutex<[CallClientEvent]>([])
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    public init(_ client: CallClient, onEvent: @escaping @Sendable (CallClientEvent) async -> Void = { _ in }) {
        let reader = Task { [self] in
            for await event in client.events {
                record(event)
                await onEvent(event)
            }
        }
        task.withLock { $0 = reader }
    }

    private func record(_ event: CallClientEvent) { events.withLock { $0.append(event) } }

    public var all: [CallClientEvent] { events.withLock { $0 } }

    /// The (state, reason, event) numbers of the state changes so far.
    public var states: [String] {
        all.compactMap {
            guard case .stateChanged(let state, let reason, let event, _) = $0 else { return nil }
            return "\(state.rawValue) \(reason.rawValue) \(event.rawValue)"
        }
    }

    public func wait(_ what: String, timeout: Duration = .seconds(15), _ match: @escaping (CallClientEvent) -> Bool) async throws {
        do {
            try await eventually(what, timeout: timeout) { self.all.contains(where: match) }
        } catch {
            throw ShowroomError.deadlineExceeded("\(what): not within \(timeout); states so far \(states)")
        }
    }

    public func stop() { task.withLock { $0?.cancel() } }
}

/// A live host and a viewer of its room logged in to signaling and prepared: the host pauses its
/// live connection while in a call and accepts whatever rings.
public struct ShowCallParties: Sendable {
    public let hostCalls: CallClient
    public let viewerCalls: CallClient
    public let hostLog: CallEventLog
    public let viewerLog: CallEventLog

    public static func start(host: UInt32, _ hostEngine: ShowroomEngine, viewer: UInt32, _ viewerEngine: ShowroomEngine, seeds: [String],
                      live: ChannelConnection) async throws -> ShowCallParties {
        let hostCalls = CallClient(uid: host, engine: hostEngine, seeds: seeds, pollWait: .seconds(2))
        let viewerCalls = CallClient(uid: viewer, engine: viewerEngine, seeds: seeds, pollWait: .seconds(2))
        let parties = ShowCallParties(
            hostCalls: hostCalls, viewerCalls: viewerCalls,
            hostLog: CallEventLog(hostCalls) { event in
                if case .stateChanged(.calling, _, _, let info?) = event { try? await hostCalls.accept(remoteUserId: info.caller) }
            },
            viewerLog: CallEventLog(viewerCalls))
        do {
            try await hostCalls.login(token: TestApp.loginToken(uid: host))
            try await viewerCalls.login(token: TestApp.loginToken(uid: viewer))
            try await hostCalls.prepareForCall(PrepareConfig(pausesConnection: live))
            try await viewerCalls.prepareForCall(PrepareConfig())
        } catch {
            parties.stop()
            throw error
        }
        return parties
    }

    public func stop() {
        hostLog.stop()
        viewerLog.stop()
    }
}
