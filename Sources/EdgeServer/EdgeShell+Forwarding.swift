import Edge
import Foundation
import ShowroomWire
import ZeroMQ

// Forwarding broadcasters' tracks into other channels: the requests (a client's, a
// coordinator's), the frame path onto the links, and carrying out what ``ForwardBook`` says.

extension EdgeShell {
    // MARK: - Requests

    /// `START_FORWARD` … `RESUME_FORWARD` from a client: the forward of its own connection's uid
    /// (``ForwardBook/clientRequest(_:from:in:)``).
    func handleForwardRequest(_ envelope: WireEnvelope, from session: SessionID) {
        let answer: WireEnvelope
        do throws(ShowroomError) {
            let (channel, operation, key) = try forwards.clientRequest(envelope, from: session, in: plane)
            let statuses = try apply(operation, to: key, from: session)
            answer = try EdgeCodec.forwardResponse(to: envelope, channel: channel, destinations: statuses)
        } catch {
            answer = WireEnvelope(responseTo: envelope, error: error)
        }
        sendControl(answer, to: session)
    }

    /// A coordinator's `FORWARD_COMMAND`: the forward of a broadcaster connected here
    /// (``ForwardBook/commandSource(channel:uid:in:)``).
    func forwardCommand(_ body: EdgeForwardCommand) throws(ShowroomError) -> [ForwardDestinationStatus] {
        let (channel, uid, operation) = try EdgeCodec.forwardCommand(body)
        let (session, key) = try forwards.commandSource(channel: channel, uid: uid, in: plane)
        return try apply(operation, to: key, from: session)
    }

    private func apply(_ operation: ForwardOperation, to key: ForwardKey, from session: SessionID) throws(ShowroomError) -> [ForwardDestinationStatus] {
        var out: [ForwardDirective] = []
        let statuses = try forwards.apply(operation, to: key, from: session, now: now, &out)
        logger.info("forward of \(key): \(operation.name)")
        performForward(out)
        return statuses
    }

    // MARK: - The frame path

    /// Sends a frame the plane forwarded on to the running destinations of its publisher's
    /// forward: the envelope rewritten for each destination channel, the payload by reference.
    /// Allocation-free in Swift; a video destination whose queue overflowed waits for a keyframe.
    func forwardFrame(_ frame: Multipart, header: WireMediaHeader, info: MediaFrameInfo, from session: SessionID) {
        guard let kind = info.kind, let (source, targets) = forwards.targets(channel: info.channel, uid: info.publisherUID),
            source == session, plane.publishes(session, TrackID(channel: info.channel, uid: info.publisherUID, kind: kind))
        else { return }
        let key = ForwardKey(channel: info.channel, uid: info.publisherUID)
        var keyframeWanted = false
        // One message per destination edge: the first destination on an edge leads, the others
        // on it ride along in `also_channels`.
        for (index, target) in targets.enumerated()
        where !targets[..<index].contains(where: { $0.edge.endpoint == target.edge.endpoint }) {
            guard let link = forwardLinks.route(key, targets: targets, from: index, video: kind == .video, keyframe: info.isKeyframe,
                                                into: &forwardChannels, ready: { $0.isOpen }),
                let first = forwardChannels.first
            else { continue }
            forwardHeader.write(header, channel: first, also: forwardChannels.dropFirst())
            forwardBuffer.removeAll()
            forwardHeader.bytes.withUnsafeBytes { forwardBuffer.append(bytes: $0) }
            forwardBuffer.append(referenceTo: 2, of: frame)
            if link.sendFrame(forwardBuffer) != .sent, kind == .video {
                forwardLinks.dropped(forwardChannels, of: key, to: target.edge.endpoint)
                keyframeWanted = true
            }
        }
        forwardBuffer.removeAll()
        if keyframeWanted { performForward(forwards.keyframeWanted(key, now: now)) }
    }

    /// A frame that came over a forward link for more channels than its own (`also_channels`):
    /// forwarded in each of them too, with the header's channel rewritten (the payload by
    /// reference). Video is kept in each channel's GOP cache, so it gets a message of its own;
    /// audio reuses one.
    func forwardAlso(_ frame: Multipart, header: WireMediaHeader, info: MediaFrameInfo, from session: SessionID) {
        for channel in header.alsoChannels {
            forwardHeader.write(header, channel: channel)
            let copy = info.kind == .video ? Multipart(capacity: 3) : alsoBuffer
            copy.removeAll()
            copy.append(referenceTo: 0, of: frame)
            forwardHeader.bytes.withUnsafeBytes { copy.append(bytes: $0) }
            copy.append(referenceTo: 2, of: frame)
            let moved = MediaFrameInfo(channel: channel, publisherUID: info.publisherUID, kind: info.kind, isKeyframe: info.isKeyframe,
                                       audioLevel: info.audioLevel, payloadSize: info.payloadSize)
            perform(forwardInPlane(copy, info: moved, from: session))
        }
        alsoBuffer.removeAll()
    }

    // MARK: - Carrying out the book's directives

    func performForward(_ directives: [ForwardDirective]) {
        guard !directives.isEmpty else { return }
        reports.channelsDidChange()
        perform(forwardDirectives(directives))
    }

    /// Carries out the book's directives; what they mean for clients comes back as the plane's
    /// directives (events to the broadcaster, keyframe requests), for ``perform(_:)``.
    func forwardDirectives(_ directives: [ForwardDirective]) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        for directive in directives {
            switch directive {
            case .place(let key, let destination, let token, let attempt, let unreachableEdge):
                let placement = ForwardPlacement(key: key, destination: destination, token: token, attempt: attempt, unreachableEdge: unreachableEdge)
                if let reports = coordinatorReports {
                    reports.place(placement)
                } else {
                    // A bare edge (no node): nobody places channels; fail and retry.
                    forwardPlaced(placement, .failure(.unavailable("this edge has no link to the room-coordinators yet")))
                }
            case .join(let key, let destination, let token, let edge, let attempt):
                join(key, destination: destination, token: token, on: edge, attempt: attempt)
            case .leave(let key, let destination, let edge):
                leave(key, destination: destination, on: edge)
            case .notify(let session, let change):
                out.append(.send(.forwardStateChanged(change), to: session))
            case .requestKeyframe(let track, let session):
                out.append(.requestKeyframe(track, from: session))
            }
        }
        return out
    }

    /// A coordinator's answer to a placement.
    func forwardPlaced(_ placement: ForwardPlacement, _ result: Result<ForwardEdge, ShowroomError>) {
        performForward(forwards.placed(placement.key, destination: placement.destination, attempt: placement.attempt, result, now: now))
    }

    private func join(_ key: ForwardKey, destination: String, token: String, on edge: ForwardEdge, attempt: UInt64) {
        if forwardLinks.handle(of: key, to: edge.endpoint) == nil {
            do throws(ShowroomError) {
                try openLink(key, to: edge)
            } catch {
                return performForward(forwards.joined(key, destination: destination, attempt: attempt, .failure(error), now: now))
            }
        }
        guard let (id, link) = forwardLinks.join(destination, of: key, to: edge.endpoint) else { return }
        let options = MediaOptions(publishAudio: true, publishVideo: true, autoSubscribeAudio: false, autoSubscribeVideo: false)
        link.whenOpen { [unowned self, unowned link] opened in
            if case .failure(let error) = opened {
                return performForward(forwards.joined(key, destination: destination, attempt: attempt, .failure(error), now: now))
            }
            link.request(.join(channel: destination, uid: key.uid, token: token, role: .broadcaster, options: options), now: now) {
                [unowned self] result in
                let outcome = result.flatMap(ForwardLink.reply).map { _ in () }
                performForward(forwardLinks.joinAnswered(destination, over: id, attempt: attempt, outcome, book: &forwards, now: now))
                closeIfUnused(id)
            }
        }
    }

    private func leave(_ key: ForwardKey, destination: String, on edge: ForwardEdge) {
        guard let (id, link) = forwardLinks.remove(destination, of: key, to: edge.endpoint) else { return }
        link.whenOpen { [unowned self, unowned link] opened in
            guard case .success = opened else { return }
            link.request(.leave(channel: destination), now: now) { [unowned self] _ in closeIfUnused(id) }
        }
    }

    /// Connects the link of a forward to an edge and opens its session.
    private func openLink(_ key: ForwardKey, to edge: ForwardEdge) throws(ShowroomError) {
        let link = try face.link(key, to: edge, now: now)
        let id = forwardLinks.opened(link, for: key, to: edge.endpoint)
        attach(link, receive: { [unowned self] link in receive(on: link, id) }, broke: { [unowned self] link, error in linkDown(id, link, error) })
        let clientID = "\(ForwardLinkIdentity.clientIDPrefix)\(key.channel)/\(key.uid)/\(String(random(), radix: 16))"
        link.open(clientID: clientID, now: now)
        logger.info("forward of \(key): link to edge \(edge)")
    }

    /// Closes a link with no channel left once its last leave is answered: `EDGE_CLOSE_SESSION`
    /// first, so the destination edge does not wait for a heartbeat timeout.
    private func closeIfUnused(_ id: ForwardLinks<ForwardLink>.Link) {
        guard let link = forwardLinks.closeIfUnused(id) else { return }
        retire(link, .unavailable("the forward link was closed"))
    }

    /// Has the face watch a new link: `receive` when messages wait, `broke` when its connection
    /// breaks.
    func attach(_ link: ForwardLink, receive: @escaping (ForwardLink) -> Void, broke: @escaping (ForwardLink, ShowroomError) -> Void) {
        face.attach(link, receive: receive) { link in broke(link, .unavailable("the connection to edge \(link.edge.id) broke")) }
    }

    /// Ends a link nothing uses any more (already out of its table): `EDGE_CLOSE_SESSION` first
    /// when its session is open, so the other edge does not wait for a heartbeat timeout.
    func retire(_ link: ForwardLink, _ reason: ShowroomError) {
        let finish: () -> Void = { [unowned self, link] in detach(link, reason) }
        guard link.isOpen else { return finish() }
        link.request(.closeSession, now: now) { _ in finish() }
    }

    /// Stops watching a link and closes it; what waits on it fails with `error`.
    func detach(_ link: ForwardLink, _ error: ShowroomError) {
        face.detach(link)
        link.close(error)
    }

    /// The link broke: its destinations fail (unreachable) and are placed again.
    private func linkDown(_ id: ForwardLinks<ForwardLink>.Link, _ link: ForwardLink, _ error: ShowroomError) {
        guard forwardLinks.broke(id) else { return }
        logger.warning("forward of \(link.key): link to edge \(link.edge) down: \(error)")
        detach(link, error)
        performForward(forwards.linkDown(link.key, edge: link.edge, error, now: now))
    }

    // MARK: - What links receive

    private func receive(on link: ForwardLink, _ id: ForwardLinks<ForwardLink>.Link) {
        let buffer = link.receiveBuffer
        for _ in 0..<256 {
            guard forwardLinks.isCurrent(id), link.receive(into: buffer) else { return }
            link.lastHeard = now
            guard buffer.count == 1,
                let envelope = try? buffer.withBytes(of: 0, { (bytes) throws(ShowroomError) in try WireEnvelope.decode(frame: bytes) })
            else { continue }
            if envelope.isResponse {
                link.answered(envelope)
            } else if envelope.kind == .keyframeRequest {
                performForward(forwards.keyframeWanted(link.key, now: now))
            } else if let event = try? EdgeCodec.event(from: envelope) {
                linkEvent(event, on: link, id)
            }
        }
    }

    private func linkEvent(_ event: EdgeEvent, on link: ForwardLink, _ id: ForwardLinks<ForwardLink>.Link) {
        switch event {
        case .connectionClosed(let channel, let reason):
            performForward(forwardLinks.connectionClosed(channel, over: id, edge: link.edge, reason, book: &forwards, now: now))
            closeIfUnused(id)
        case .sessionClosed(let reason):
            linkDown(id, link, reason)
        case .error(let error, let channel, _):
            logger.debug("forward of \(link.key): edge \(link.edge.id) refused something in '\(channel)': \(error)")
        default:
            break
        }
    }

    // MARK: - Timers

    /// The book's retries and held keyframe requests, the links' heartbeats and deadlines.
    func tickForwards() {
        let now = self.now
        if !forwards.isEmpty { performForward(forwards.tick(now: now)) }
        for (id, link) in forwardLinks.all {
            if let error = link.tick(now: now) { linkDown(id, link, error) }
        }
    }
}

extension ForwardOperation {
    /// For logs.
    var name: String {
        switch self {
        case .start(let destinations): "start \(destinations.map(\.channel))"
        case .update(let destinations): "update \(destinations.map(\.channel))"
        case .stop: "stop"
        case .pause: "pause"
        case .resume: "resume"
        }
    }
}
