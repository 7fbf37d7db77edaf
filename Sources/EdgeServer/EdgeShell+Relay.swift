import Edge
import Foundation
import ShowroomWire
import ZeroMQ

// Relay edges: channels hosted as relays of their origin edge (a claim answer with relay_of_*),
// pulled over one link per origin and fanned out here; and, on the origin, the relay links'
// keyframe requests. ``RelayBook`` decides; this carries it out.

extension EdgeShell {
    // MARK: - Hosting

    /// Hosts `channel` as a relay of `origin`, as a claim answer with `relay_of_*` does.
    func hostRelay(_ channel: String, of origin: RelayOrigin) {
        performRelay(relays.hosting(channel, origin: origin, now: now))
    }

    /// Whether the coordinators hear of a plane's activity (see ``RelayBook/report(_:now:)``).
    func relayReports(_ activity: ChannelActivity) -> Bool {
        let (reported, directives) = relays.report(activity, now: now)
        performRelay(directives)
        return reported
    }

    // MARK: - Carrying out the book's directives

    func performRelay(_ directives: [RelayDirective]) {
        for directive in directives {
            switch directive {
            case .hosted(let channel, let origin):
                logger.info("hosting channel \(channel) as a relay of edge \(origin)")
                reports.channelsDidChange()
            case .openLink(let origin, let uid):
                openRelayLink(to: origin, uid: uid)
            case .link(let channel, let origin):
                pull(channel, from: origin)
            case .unlink(let channel, let origin):
                guard let link = relayLinks[origin.endpoint] else { continue }
                link.whenOpen { [unowned self, unowned link] opened in
                    guard case .success = opened else { return }
                    link.request(.leave(channel: channel), now: now) { [unowned self, unowned link] _ in
                        performRelay(relays.leaveAnswered(onLink: link.key.uid, to: link.edge.endpoint))
                    }
                }
            case .closeLink(let origin, let uid):
                guard let link = relayLinks.close(origin.endpoint, uid: uid) else { continue }
                logger.info("relay link to edge \(origin) closed: no channel pulled")
                retire(link, .unavailable("the relay link was closed"))
            case .claim(let channel):
                // A bare edge (no node) has nobody to ask; the book keeps the viewers waiting.
                coordinatorReports?.claim(channel)
            case .requestKeyframe(let track, let origin):
                guard let link = relayLinks[origin.endpoint], link.isOpen,
                    let envelope = try? EdgeCodec.relayKeyframeRequest(for: track),
                    let bytes = try? envelope.serializedBytes() as [UInt8]
                else { continue }
                _ = try? link.send(bytes: bytes)
            case .openStandIn(let id, let publisher):
                openStandIn(id, for: publisher)
            case .standInTrack(let id, let track, let published):
                perform(plane.standInTrack(id, track, published: published, now: now))
            case .endStandIn(let id, let dropped):
                perform(dropped ? plane.sessionUnreachable(id, now: now) : plane.closeSession(id, now: now))
            case .release(let channel):
                logger.info("channel \(channel) is no longer relayed here")
                reports.channelsDidChange()
            case .log(let entry):
                log(entry)
            }
        }
    }

    /// Connects the link to `origin` and opens its session as `uid`.
    private func openRelayLink(to origin: RelayOrigin, uid: UInt32) {
        let link: ForwardLink
        do {
            link = try face.link(ForwardKey(channel: "", uid: uid), to: origin, now: now)
        } catch {
            logger.warning("relay: cannot link to edge \(origin): \(error)")
            return performRelay(relays.linkDown(endpoint: origin.endpoint, now: now))
        }
        relayLinks.opened(link, uid: uid, to: origin.endpoint)
        attach(link, receive: { [unowned self] link in receiveRelayed(on: link) },
               broke: { [unowned self] link, error in relayLinkDown(link, error) })
        link.open(clientID: "\(RelayLinkIdentity.clientIDPrefix)\(String(random(), radix: 16))", now: now)
        logger.info("relay link to edge \(origin) as uid \(uid)")
    }

    /// Joins `channel` on `origin` over its link as audience, subscribing to every track.
    private func pull(_ channel: String, from origin: RelayOrigin) {
        guard let link = relayLinks[origin.endpoint] else { return }
        let uid = link.key.uid
        let token: String
        do {
            token = try grants.relayLinkToken(channel: channel, uid: uid, unixNow: UInt32(clamping: time.unixNowMs / 1000), random: random())
        } catch {
            logger.error("relay of channel \(channel): cannot mint the link's token: \(error)")
            return
        }
        let options = MediaOptions(publishAudio: false, publishVideo: false, autoSubscribeAudio: true, autoSubscribeVideo: true)
        link.whenOpen { [unowned self, unowned link] opened in
            guard case .success = opened else { return relayLinkDown(link, .unavailable("edge \(origin) did not open the relay link")) }
            link.request(.join(channel: channel, uid: uid, token: token, role: .audience, options: options), now: now) {
                [unowned self, unowned link] result in
                guard case .failure(let error) = result.flatMap(ForwardLink.reply) else { return }
                logger.warning("relay of channel \(channel): edge \(origin) refused the join: \(error)")
                performRelay(relays.channelLost(channel, onLink: uid, to: link.edge.endpoint, now: now))
            }
        }
    }

    /// The link broke: its channels claim again, their viewers stay.
    private func relayLinkDown(_ link: ForwardLink, _ error: ShowroomError) {
        guard relayLinks.broke(link, to: link.edge.endpoint) else { return }
        logger.warning("relay link to edge \(link.edge) down: \(error)")
        detach(link, error)
        performRelay(relays.linkDown(endpoint: link.edge.endpoint, now: now))
    }

    // MARK: - Stand-ins

    /// A publisher the origin announced becomes a broadcaster here, publishing nothing until its
    /// tracks are announced.
    private func openStandIn(_ id: SessionID, for publisher: RelayedPublisher) {
        let (joined, directives) = plane.joinStandIn(id, channel: publisher.channel, uid: publisher.uid, now: now)
        if !joined { logger.warning("relay of channel \(publisher.channel): uid \(publisher.uid) cannot publish here") }
        perform(directives)
    }

    // MARK: - What relay links receive

    private func receiveRelayed(on link: ForwardLink) {
        let buffer = link.receiveBuffer
        for _ in 0..<256 {
            guard relayLinks.isCurrent(link, to: link.edge.endpoint), link.receive(into: buffer) else { return }
            link.lastHeard = now
            guard let envelope = try? buffer.withBytes(of: 0, { (bytes) throws(ShowroomError) in try WireEnvelope.decode(frame: bytes) })
            else { continue }
            if envelope.kind == .mediaFrame {
                if buffer.count == 2 { relayFrame(envelope, from: buffer, on: link) }
            } else if buffer.count != 1 {
                continue
            } else if envelope.isResponse {
                link.answered(envelope)
            } else if let event = try? EdgeCodec.event(from: envelope) {
                if case .sessionClosed(let reason) = event { return relayLinkDown(link, reason) }
                performRelay(relays.linkEvent(event, onLink: link.key.uid, from: link.edge.endpoint, now: now))
            }
        }
    }

    /// A frame of the origin's publisher: forwarded here as its stand-in's, in the plane's frame
    /// layout (`[routing id][envelope][payload]`, the first frame unused), by reference.
    private func relayFrame(_ envelope: WireEnvelope, from buffer: Multipart, on link: ForwardLink) {
        guard let header = try? envelope.decodeBody(WireMediaHeader.self),
            let info = try? EdgeCodec.checkedFrameInfo(header: header, payloadSize: buffer.size(of: 1)),
            let standIn = relays.standIn(ofFrameIn: info.channel, uid: info.publisherUID, from: link.edge.endpoint)
        else { return }
        // Video stays in the GOP cache: a message of its own; audio reuses one.
        let frame = info.kind == .video ? Multipart(capacity: 3) : relayAudioFrame
        frame.removeAll()
        frame.append(referenceTo: 0, of: buffer)
        frame.append(referenceTo: 0, of: buffer)
        frame.append(referenceTo: 1, of: buffer)
        let directives = forwardInPlane(frame, info: info, from: standIn)
        relayAudioFrame.removeAll()
        perform(directives)
    }

    // MARK: - On the origin

    /// `RELAY_KEYFRAME_REQUEST` from a relay link: the publisher is asked for a keyframe (the
    /// plane checks the link subscribes and paces the requests). One-way: nothing is answered.
    func handleRelayKeyframeRequest(_ envelope: WireEnvelope, from session: SessionID) {
        guard let track = try? EdgeCodec.relayKeyframeRequest(from: envelope) else { return }
        perform(plane.relayKeyframeRequest(track, from: session, now: now))
    }

    // MARK: - Timers

    /// The book's releases and claims, the links' heartbeats and deadlines.
    func tickRelays() {
        guard !relays.isIdle || !relayLinks.isEmpty else { return }
        let now = self.now
        performRelay(relays.tick(now: now))
        for link in relayLinks.all {
            if let error = link.tick(now: now) { relayLinkDown(link, error) }
        }
    }
}
