internal import EdgeProtocol
internal import MediaCodecs
internal import ShowroomWire

// Local media: capture, encode once, send to every connection that publishes.

extension EngineShell {
    /// Starts or stops the capture timers to match what the connections publish. Called after
    /// anything that changes it (join, leave, role, options, mutes, sources).
    func refreshPublishing() {
        let records = state.connections.values
        let wantsVideo = !isShutDown && videoSource != nil && records.contains { $0.sends(.video) }
        let wantsAudio = !isShutDown && audioSource != nil && records.contains { $0.sends(.audio) }
        // A connection that starts sending video mid-GOP (a host's call connection at accept)
        // would leave its subscribers waiting for the next keyframe: ask for one now.
        let sendingVideo = Set(records.filter { $0.sends(.video) }.map(\.connection.channel))
        let startsSending = !sendingVideo.isSubset(of: videoChannels)
        // An app that encodes its own video is told too.
        if startsSending { wantKeyframe() }
        videoChannels = sendingVideo
        if wantsVideo, videoTimer == nil, let source = videoSource {
            keyframeWanted = true  // the first frame anyone sees must decode
            let interval = Duration.seconds(1) / source.framesPerSecond
            videoTimer = host.scheduleRepeating(every: interval) { [weak self] in self?.captureVideo() }
        } else if !wantsVideo, let timer = videoTimer {
            host.cancel(timer)
            videoTimer = nil
        }
        // That first frame goes now, not a frame interval later (up to 67 ms at 15 fps): it is on
        // the path of a join's and a call's first decoded frame.
        if wantsVideo, startsSending { _ = host.schedule(after: .zero) { [weak self] in self?.captureVideo() } }
        if wantsAudio, audioTimer == nil {
            let interval = Duration.milliseconds(AudioFormat.frameDurationMilliseconds)
            audioTimer = host.scheduleRepeating(every: interval) { [weak self] in self?.captureAudio() }
        } else if !wantsAudio, let timer = audioTimer {
            host.cancel(timer)
            audioTimer = nil
        }
    }

    /// Replaces the camera; the encoder is rebuilt for the new size.
    func setVideoSource(_ source: (any VideoSource)?) {
        if source != nil { externalEncodedVideo = false }
        videoSource = source
        videoEncoder = nil
        if let timer = videoTimer {
            host.cancel(timer)
            videoTimer = nil
        }
        refreshPublishing()
    }

    /// Switches video between the camera and frames the app encodes itself.
    package func setExternalEncodedVideo(_ enabled: Bool) {
        externalEncodedVideo = enabled
        if enabled { setVideoSource(nil) }
    }

    /// Sends an app-encoded frame to every connection that publishes video.
    ///
    /// - Returns: The connections it went to.
    package func pushEncodedVideo(_ frame: ExternalEncodedVideoFrame) throws(ShowroomError) -> Int {
        guard externalEncodedVideo else {
            throw .invalidArgument("pushing encoded video needs setExternalEncodedVideoSource(true) first")
        }
        guard !frame.data.isEmpty else { throw .invalidArgument("an encoded video frame needs data; got 0 bytes") }
        guard frame.width > 0, frame.height > 0, frame.width <= 8192, frame.height <= 8192 else {
            throw .invalidArgument("an encoded video frame needs a size of 1–8192 pixels a side; got \(frame.width)×\(frame.height)")
        }
        for record in state.connections.values where record.sends(.video) {
            if let serial = state.active[record.edgeEndpoint], let limit = state.sessions[serial]?.limits?.maxFrameBytes, frame.data.count > limit {
                throw .tooLarge("an encoded video frame of \(frame.data.count) bytes is over the edge's limit of \(limit) bytes")
            }
        }
        let sent = sendVideo(frame.data, keyframe: frame.isKeyframe, width: frame.width, height: frame.height,
                             captured: frame.captureTimeMicroseconds ?? host.microseconds)
        if frame.isKeyframe { keyframeWanted = false }
        return sent
    }

    /// A subscriber needs a keyframe: the encoder makes the next frame one, or the app is told.
    func wantKeyframe() {
        keyframeWanted = true
        if externalEncodedVideo { emit(.keyframeRequested) }
    }

    /// Replaces the microphone.
    func setAudioSource(_ source: (any AudioSource)?) {
        audioSource = source
        refreshPublishing()
    }

    /// Gets the camera's encoder ready before anything publishes (the seeds' `startPreview`), so
    /// the first frame of a join or a call is not held up making it.
    func startPreview() {
        guard let source = videoSource else { return }
        _ = videoEncoder(width: source.width, height: source.height, framesPerSecond: source.framesPerSecond)
    }

    /// The encoder for pictures of `width × height`, made (and a keyframe asked for) when there is
    /// none for that size; `nil` (the app told, the camera dropped) when it cannot be made.
    private func videoEncoder(width: Int, height: Int, framesPerSecond fps: Int) -> VideoEncoder? {
        if let existing = videoEncoder, existing.configuration.width == width, existing.configuration.height == height {
            return existing
        }
        let media = configuration.media
        let gop = max(1, Int((media.keyframeInterval.seconds * Double(fps)).rounded()))
        guard let created = try? VideoEncoder(configuration: .init(
            codec: .vp8, width: width, height: height, framesPerSecond: fps,
            targetBitrateKbps: media.videoBitrateKbps, keyframeInterval: gop))
        else {
            emit(.error(nil, .invalidArgument("cannot encode \(width)×\(height) video; check the video source")))
            setVideoSource(nil)
            return nil
        }
        videoEncoder = created
        keyframeWanted = true
        return created
    }

    private func captureVideo() {
        guard let source = videoSource else { return }
        let captured = host.microseconds
        let picture = source.nextFrame()
        guard let encoder = videoEncoder(width: picture.width, height: picture.height, framesPerSecond: source.framesPerSecond)
        else { return }
        let forceKeyframe = keyframeWanted
        keyframeWanted = false
        guard let packets = try? encoder.encode(picture, forceKeyframe: forceKeyframe) else { return }
        for packet in packets {
            sendVideo(packet.data, keyframe: packet.isKeyframe, width: picture.width, height: picture.height, captured: captured)
        }
    }

    /// Sends one encoded video frame to every connection that publishes video.
    ///
    /// - Returns: The connections it went to.
    @discardableResult
    private func sendVideo(_ data: [UInt8], keyframe: Bool, width: Int, height: Int, captured: UInt64) -> Int {
        let sent = sendToPublishers(.video, data, captured: captured) { header in
            header.keyframe = keyframe
            header.width = UInt32(width)
            header.height = UInt32(height)
        }
        mediaStatistics.videoFramesSent += sent
        if keyframe { mediaStatistics.keyframesSent += sent }
        return sent
    }

    /// Sends one encoded frame of `kind` on every connection that publishes it; `stamp` sets the
    /// kind's own header fields. Each connection's sequence is bumped in place, not on a copy.
    ///
    /// - Returns: The connections it went to.
    private func sendToPublishers(_ kind: TrackKind, _ payload: [UInt8], captured: UInt64, _ stamp: (inout WireMediaHeader) -> Void) -> Int {
        var sent = 0
        for index in state.connections.values.indices where state.connections.values[index].sends(kind) {
            var header = state.connections.values[index].nextMediaHeader(kind, captured: captured)
            stamp(&header)
            header.payloadSize = UInt32(payload.count)
            guard send(header, payload, to: state.connections.values[index].edgeEndpoint, lingeringOn: state.connections.values[index].lingeringOn)
            else { continue }
            sent += 1
            if state.connections.values[index].markSent(kind) {
                let record = state.connections.values[index]
                emit(.firstLocalFramePublished(record.connection, track: kind, elapsedSinceJoin: record.joinStarted.duration(to: host.now)))
            }
        }
        return sent
    }

    private func captureAudio() {
        guard let source = audioSource else { return }
        let captured = host.microseconds
        let pcm = source.nextFrame()
        if audioEncoder == nil {
            audioEncoder = try? OpusEncoder(channels: 1, application: .voip, bitrate: configuration.media.audioBitrate)
        }
        guard let encoder = audioEncoder, let packet = try? encoder.encode(pcm) else { return }
        let level = UInt32(AudioLevel(pcm: pcm).level)
        mediaStatistics.audioFramesSent += sendToPublishers(.audio, packet, captured: captured) { $0.audioLevel = level }
    }

    /// Sends one frame on the session with `edge`; a full queue drops it (live media).
    private func send(_ header: WireMediaHeader, _ payload: [UInt8], to edge: String, lingeringOn: EdgeAddress?) -> Bool {
        guard let serial = state.openSession(to: edge), let session = links[serial] else { return false }
        var header = header
        // Stamped last, after encoding: receivers measure publish -> receive from here.
        header.sendTimeUs = host.microseconds
        guard let envelope = try? WireEnvelope(request: .mediaFrame, id: 0, body: header) else { return false }
        guard session.sendMedia(envelope, payload: payload) else {
            mediaStatistics.framesDroppedOnSend += 1
            return false
        }
        // A broadcaster that moved keeps its draining old edge's viewers served until they moved.
        if let lingering = lingeringOn, let serial = state.openSession(to: lingering.endpoint), let old = links[serial] {
            _ = old.sendMedia(envelope, payload: payload)
        }
        return true
    }
}
