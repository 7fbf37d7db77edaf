// Local and remote media tracks: capture → WebCodecs encoders (VP8, Opus 48 kHz in 20 ms
// frames), and WebCodecs decoders → a canvas and Web Audio. A local track encodes once for
// every client that publishes it; a remote track decodes from subscribe on, so a late play()
// shows the last picture at once.

import { Emitter, ShowroomError, log, nowMicroseconds } from './wire.js';

/** Opus at 48 kHz in 20 ms frames, as the Swift SDK and the edges expect. */
export const AUDIO_SAMPLE_RATE = 48000;
const AUDIO_FRAME_SAMPLES = 960;

/** A keyframe every 2 s, the Swift SDK's GOP (MediaConfiguration.keyframeInterval). */
export const KEYFRAME_INTERVAL_MS = 2000;
/**
 * The edge asks again every 500 ms while a subscriber still waits: a keyframe for its requests at
 * most this often (a keyframe is several times a delta frame's size).
 */
export const KEYFRAME_REQUEST_INTERVAL_MS = 1000;

/** Camera presets (Agora's names). */
export const VIDEO_PRESETS = {
  '120p': { width: 160, height: 120, frameRate: 15, bitrateMax: 65 },
  '180p': { width: 320, height: 180, frameRate: 15, bitrateMax: 140 },
  '240p': { width: 320, height: 240, frameRate: 15, bitrateMax: 200 },
  '360p': { width: 640, height: 360, frameRate: 15, bitrateMax: 400 },
  '480p': { width: 640, height: 480, frameRate: 15, bitrateMax: 500 },
  '720p': { width: 1280, height: 720, frameRate: 15, bitrateMax: 1130 },
  '1080p': { width: 1920, height: 1080, frameRate: 15, bitrateMax: 2080 },
};

/** Resolves an Agora-style encoder configuration (a preset name or an object). */
export function videoEncoderConfig(config) {
  const base = typeof config === 'string' ? VIDEO_PRESETS[config] : config;
  if (typeof config === 'string' && !base) throw new ShowroomError('INVALID_ARGUMENT', `unknown video preset '${config}'`);
  const preset = { ...VIDEO_PRESETS['480p'], ...(base ?? {}) };
  const pick = (value) => (typeof value === 'object' && value !== null ? value.ideal ?? value.max ?? value.exact ?? value.min : value);
  return {
    width: Number(pick(preset.width)) || 640,
    height: Number(pick(preset.height)) || 480,
    frameRate: Math.max(1, Math.min(60, Number(pick(preset.frameRate)) || 15)),
    bitrateMax: Math.max(30, Number(preset.bitrateMax) || 500),
  };
}

// ------------------------------------------------------------------------------------------------
// Audio output

let audioContext = null;
/** Called when audio cannot start without a user gesture. */
export const autoplay = { onFailed: null };

/** The page's shared AudioContext at 48 kHz (made on first use). */
export function getAudioContext() {
  if (!audioContext) {
    try {
      audioContext = new AudioContext({ sampleRate: AUDIO_SAMPLE_RATE, latencyHint: 'interactive' });
    } catch {
      audioContext = new AudioContext({ latencyHint: 'interactive' });
    }
  }
  return audioContext;
}

/** Resumes the shared AudioContext (call from a user gesture when autoplay was refused). */
export async function resumeAudio() {
  const context = getAudioContext();
  if (context.state !== 'running') await context.resume();
}

function ensureAudioRunning() {
  const context = getAudioContext();
  if (context.state === 'running') return context;
  context.resume().catch(() => {});
  // A resume that has not taken after a moment needs a gesture.
  setTimeout(() => {
    if (context.state !== 'running' && typeof autoplay.onFailed === 'function') {
      try {
        autoplay.onFailed();
      } catch (error) {
        log.error('onAutoplayFailed threw', error);
      }
    }
  }, 500);
  return context;
}

/** The element a track plays in: an element or its id. */
function resolveElement(target) {
  const element = typeof target === 'string' ? document.getElementById(target) : target;
  if (!(element instanceof HTMLElement)) throw new ShowroomError('INVALID_ARGUMENT', `no element '${target}' to play in`);
  return element;
}

/** 0 (silence) – 100 (full scale), linear in dBov above -60 dBov (the Swift SDK's AudioLevel). */
export function audioLevel(sumOfSquares, count) {
  if (count === 0) return 0;
  const rms = Math.sqrt(sumOfSquares / count);
  if (rms <= 0) return 0;
  const decibels = Math.max(-127, Math.min(0, 20 * Math.log10(rms)));
  return Math.max(0, Math.min(100, Math.round(((decibels + 60) / 60) * 100)));
}

let trackCounter = 0;

// ------------------------------------------------------------------------------------------------
// Local tracks

/** What the local video and audio tracks share: the captured track, its sinks, enable and mute. */
class LocalTrack extends Emitter {
  constructor(mediaStreamTrack, kind) {
    super();
    if (!(mediaStreamTrack instanceof MediaStreamTrack) || mediaStreamTrack.kind !== kind) {
      throw new ShowroomError('INVALID_ARGUMENT', `a local ${kind} track needs ${kind === 'audio' ? 'an audio' : 'a video'} MediaStreamTrack`);
    }
    this.trackMediaType = kind;
    this.enabled = true;
    this.muted = false;
    this.isPlaying = false;
    this._mediaStreamTrack = mediaStreamTrack;
    this._id = `${kind}-${++trackCounter}`;
    this._sinks = new Set();
  }

  getTrackId() {
    return this._id;
  }

  getMediaStreamTrack() {
    return this._mediaStreamTrack;
  }

  /** Stops capture for good: the device is released. */
  close() {
    this.stop();
    this._sinks.clear();
    this._refresh();
    this._mediaStreamTrack.stop();
    this.emit('track-ended');
  }

  /** Disabled: nothing is captured or sent (the device stays open). */
  async setEnabled(enabled) {
    this.enabled = Boolean(enabled);
    this._mediaStreamTrack.enabled = this.enabled;
    this._refresh();
  }

  /** Muted: nothing is sent, the preview goes on. */
  async setMuted(muted) {
    this.muted = Boolean(muted);
    this._refresh();
  }
}

// ------------------------------------------------------------------------------------------------
// Local video

/**
 * A local video track (camera or custom): plays a preview, and encodes VP8 for every client
 * that publishes it, with a keyframe every 2 s, when a client starts sending, and for the edge's
 * keyframe requests at most once a second.
 */
export class LocalVideoTrack extends LocalTrack {
  /**
   * @param {MediaStreamTrack} mediaStreamTrack
   * @param {{width?: number, height?: number, frameRate?: number, bitrateMax?: number}} [config]
   */
  constructor(mediaStreamTrack, config = {}) {
    super(mediaStreamTrack, 'video');
    this.config = videoEncoderConfig(config);
    this.keyframeIntervalMs = KEYFRAME_INTERVAL_MS;
    this.stats = { framesCaptured: 0, framesEncoded: 0, encodeErrors: 0 };
    this._encoder = null;
    this._encoderSize = '';
    this._keyframeWanted = true;
    this._keyframeRequested = false;
    this._lastKeyframeAt = -Infinity;
    this._lastFrameAt = -Infinity;
    this._capture = null;
    this._preview = null;
  }

  /** Shows the local picture in `element` (a `<video>` it creates there). */
  play(target) {
    const element = resolveElement(target);
    this.stop();
    const video = document.createElement('video');
    Object.assign(video, { autoplay: true, muted: true, playsInline: true });
    video.style.cssText = 'width:100%;height:100%;object-fit:cover;transform:scaleX(-1)';
    video.srcObject = new MediaStream([this._mediaStreamTrack]);
    element.appendChild(video);
    video.play().catch(() => {});
    this._preview = video;
    this.isPlaying = true;
  }

  /** Stops the preview. */
  stop() {
    if (this._preview) {
      this._preview.srcObject = null;
      this._preview.remove();
      this._preview = null;
    }
    this.isPlaying = false;
  }

  /** Changes size, frame rate or bitrate; the encoder is rebuilt at the next frame. */
  async setEncoderConfiguration(config) {
    this.config = videoEncoderConfig(config);
    const { width, height, frameRate } = this.config;
    await this._mediaStreamTrack.applyConstraints?.({ width: { ideal: width }, height: { ideal: height }, frameRate: { ideal: frameRate } })
      .catch(() => {});
    this._encoderSize = '';
  }

  /** The next frame is a keyframe (a client starts sending, or sends again after a gap). */
  requestKeyframe() {
    this._keyframeWanted = true;
  }

  /** The edge's KEYFRAME_REQUEST (a subscriber waits): a keyframe once a second has passed since the last. */
  _keyframeRequestedByEdge() {
    this._keyframeRequested = true;
  }

  /** `sink.sendVideo(chunk, info)` gets every encoded frame from now on. */
  _addSink(sink) {
    this._sinks.add(sink);
    this._keyframeWanted = true; // a new publisher starts on a keyframe
    this._refresh();
  }

  _removeSink(sink) {
    this._sinks.delete(sink);
    this._refresh();
  }

  _refresh() {
    const wanted = this._sinks.size > 0 && this.enabled && !this.muted && this._mediaStreamTrack.readyState === 'live';
    if (wanted && !this._capture) this._startCapture();
    else if (!wanted && this._capture) this._stopCapture();
  }

  _startCapture() {
    const capture = { stopped: false, stop: () => {} };
    this._capture = capture;
    this._keyframeWanted = true;
    if (typeof MediaStreamTrackProcessor === 'function') {
      const clone = this._mediaStreamTrack.clone();
      const reader = new MediaStreamTrackProcessor({ track: clone }).readable.getReader();
      capture.stop = () => {
        reader.cancel().catch(() => {});
        clone.stop();
      };
      (async () => {
        while (!capture.stopped) {
          const { value: frame, done } = await reader.read().catch(() => ({ done: true }));
          if (done) break;
          this._captured(frame, capture);
        }
      })();
    } else {
      // No processor (Firefox, Safari): frames from a hidden video element.
      const video = document.createElement('video');
      Object.assign(video, { autoplay: true, muted: true, playsInline: true });
      video.srcObject = new MediaStream([this._mediaStreamTrack]);
      video.play().catch(() => {});
      const next = () => {
        if (capture.stopped) return;
        if (video.videoWidth > 0) {
          try {
            this._captured(new VideoFrame(video, { timestamp: nowMicroseconds() }), capture);
          } catch (error) {
            log.debug('no frame from the video element yet', error);
          }
        }
        if (typeof video.requestVideoFrameCallback === 'function') video.requestVideoFrameCallback(next);
        else setTimeout(next, 1000 / this.config.frameRate);
      };
      if (typeof video.requestVideoFrameCallback === 'function') video.requestVideoFrameCallback(next);
      else setTimeout(next, 0);
      capture.stop = () => {
        video.srcObject = null;
      };
    }
  }

  _stopCapture() {
    this._capture.stopped = true;
    this._capture.stop();
    this._capture = null;
    if (this._encoder && this._encoder.state !== 'closed') this._encoder.close();
    this._encoder = null;
    this._encoderSize = '';
  }

  _captured(frame, capture) {
    try {
      const now = performance.now();
      this.stats.framesCaptured++;
      // Frame rate as configured: a camera delivering more is thinned.
      if (capture.stopped || now - this._lastFrameAt < 1000 / this.config.frameRate * 0.85) return;
      const encoder = this._encoderFor(frame.displayWidth, frame.displayHeight);
      if (!encoder || encoder.encodeQueueSize > 2) return; // behind: skip this frame
      this._lastFrameAt = now;
      const sinceKeyframe = now - this._lastKeyframeAt;
      const keyFrame = this._keyframeWanted || sinceKeyframe >= this.keyframeIntervalMs
        || (this._keyframeRequested && sinceKeyframe >= KEYFRAME_REQUEST_INTERVAL_MS);
      if (keyFrame) {
        this._keyframeWanted = false;
        this._keyframeRequested = false;
        this._lastKeyframeAt = now;
      }
      const captured = nowMicroseconds();
      const input = new VideoFrame(frame, { timestamp: captured });
      try {
        encoder.encode(input, { keyFrame });
      } finally {
        input.close();
      }
    } catch (error) {
      this.stats.encodeErrors++;
      log.warn('video encode failed', error);
      this._encoderSize = '';
    } finally {
      frame.close();
    }
  }

  _encoderFor(width, height) {
    // VP8 needs even sizes in some encoders; 16-8192 is what edges take.
    width = Math.max(16, Math.min(8192, width & ~1));
    height = Math.max(16, Math.min(8192, height & ~1));
    const size = `${width}x${height}`;
    if (this._encoder && this._encoder.state === 'configured' && this._encoderSize === size) return this._encoder;
    if (this._encoder && this._encoder.state !== 'closed') this._encoder.close();
    const encoder = new VideoEncoder({
      output: (chunk) => this._encoded(chunk, width, height),
      error: (error) => {
        this.stats.encodeErrors++;
        log.warn('video encoder error', error);
        this._encoderSize = '';
      },
    });
    encoder.configure({
      codec: 'vp8',
      width,
      height,
      bitrate: this.config.bitrateMax * 1000,
      framerate: this.config.frameRate,
      latencyMode: 'realtime',
    });
    this._encoder = encoder;
    this._encoderSize = size;
    this._keyframeWanted = true;
    return encoder;
  }

  _encoded(chunk, width, height) {
    this.stats.framesEncoded++;
    const info = { keyframe: chunk.type === 'key', width, height, captureUs: chunk.timestamp };
    for (const sink of this._sinks) {
      try {
        sink.sendVideo(chunk, info);
      } catch (error) {
        log.error('sending a video frame failed', error);
      }
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Local audio

/**
 * A local audio track (microphone or custom): encodes Opus (48 kHz mono, 20 ms) with each
 * frame's level for every client that publishes it.
 */
export class LocalAudioTrack extends LocalTrack {
  /**
   * @param {MediaStreamTrack} mediaStreamTrack
   * @param {{bitrate?: number}} [config] bitrate in kbps (32 by default)
   */
  constructor(mediaStreamTrack, config = {}) {
    super(mediaStreamTrack, 'audio');
    this.bitrateKbps = Math.max(6, Math.min(510, Number(config.bitrate) || 32));
    this.stats = { encodeErrors: 0 };
    this._gain = 1;
    this._level = 0;
    this._capture = null;
    this._encoder = null;
    this._pending = new Float32Array(AUDIO_FRAME_SAMPLES);
    this._pendingCount = 0;
    this._levels = [];
    this._resampler = null;
    this._monitor = null;
  }

  /** Plays the microphone locally (loopback; usually not wanted). */
  play() {
    const context = ensureAudioRunning();
    this.stop();
    this._monitor = context.createMediaStreamSource(new MediaStream([this._mediaStreamTrack]));
    this._monitor.connect(context.destination);
    this.isPlaying = true;
  }

  stop() {
    this._monitor?.disconnect();
    this._monitor = null;
    this.isPlaying = false;
  }

  /** Capture gain, 0 – 1000 (100 unchanged). */
  setVolume(volume) {
    this._gain = Math.max(0, Math.min(1000, Number(volume))) / 100;
  }

  /** The level of the last frame sent, 0 – 1. */
  getVolumeLevel() {
    return this._level / 100;
  }

  _addSink(sink) {
    this._sinks.add(sink);
    this._refresh();
  }

  _removeSink(sink) {
    this._sinks.delete(sink);
    this._refresh();
  }

  _refresh() {
    const wanted = this._sinks.size > 0 && this.enabled && !this.muted && this._mediaStreamTrack.readyState === 'live';
    if (wanted && !this._capture) this._startCapture();
    else if (!wanted && this._capture) this._stopCapture();
  }

  _startCapture() {
    const capture = { stopped: false, stop: () => {} };
    this._capture = capture;
    this._encoder = this._makeEncoder();
    if (typeof MediaStreamTrackProcessor === 'function') {
      const clone = this._mediaStreamTrack.clone();
      const reader = new MediaStreamTrackProcessor({ track: clone }).readable.getReader();
      capture.stop = () => {
        reader.cancel().catch(() => {});
        clone.stop();
      };
      (async () => {
        while (!capture.stopped) {
          const { value: data, done } = await reader.read().catch(() => ({ done: true }));
          if (done) break;
          try {
            if (!capture.stopped) this._samples(firstChannel(data), data.sampleRate);
          } finally {
            data.close();
          }
        }
      })();
    } else {
      const context = getAudioContext();
      const workletURL = new URL('./audio-capture-worklet.js', import.meta.url);
      (async () => {
        await context.audioWorklet.addModule(workletURL);
        if (capture.stopped) return;
        const source = context.createMediaStreamSource(new MediaStream([this._mediaStreamTrack]));
        const node = new AudioWorkletNode(context, 'showroom-audio-capture');
        node.port.onmessage = (event) => {
          if (!capture.stopped) this._samples(event.data.samples, event.data.sampleRate);
        };
        source.connect(node);
        capture.stop = () => {
          node.port.onmessage = null;
          source.disconnect();
          node.disconnect();
        };
      })().catch((error) => log.warn('microphone capture failed', error));
    }
  }

  _stopCapture() {
    this._capture.stopped = true;
    this._capture.stop();
    this._capture = null;
    if (this._encoder && this._encoder.state !== 'closed') this._encoder.close();
    this._encoder = null;
    this._pendingCount = 0;
    this._levels = [];
  }

  _makeEncoder() {
    const encoder = new AudioEncoder({
      output: (chunk) => this._encoded(chunk),
      error: (error) => {
        this.stats.encodeErrors++;
        log.warn('audio encoder error', error);
      },
    });
    encoder.configure({
      codec: 'opus',
      sampleRate: AUDIO_SAMPLE_RATE,
      numberOfChannels: 1,
      bitrate: this.bitrateKbps * 1000,
      opus: { frameDuration: 20000 },
    });
    return encoder;
  }

  /** Mono samples at `rate`: resampled to 48 kHz and cut into 20 ms frames. */
  _samples(samples, rate) {
    const input = rate === AUDIO_SAMPLE_RATE ? samples : this._resample(samples, rate);
    let offset = 0;
    while (offset < input.length) {
      const take = Math.min(AUDIO_FRAME_SAMPLES - this._pendingCount, input.length - offset);
      this._pending.set(input.subarray(offset, offset + take), this._pendingCount);
      this._pendingCount += take;
      offset += take;
      if (this._pendingCount === AUDIO_FRAME_SAMPLES) {
        this._encodeFrame(this._pending);
        this._pendingCount = 0;
      }
    }
  }

  _resample(samples, rate) {
    // Linear interpolation, carrying the position across calls.
    const state = this._resampler?.rate === rate ? this._resampler : { rate, position: 0, last: 0 };
    this._resampler = state;
    const step = rate / AUDIO_SAMPLE_RATE;
    const out = [];
    let position = state.position;
    while (position < samples.length) {
      const index = Math.floor(position);
      const fraction = position - index;
      const a = index - 1 >= 0 ? samples[index - 1] : state.last;
      const b = samples[index];
      out.push(a + (b - a) * fraction);
      position += step;
    }
    state.position = position - samples.length;
    state.last = samples[samples.length - 1] ?? state.last;
    return Float32Array.from(out);
  }

  _encodeFrame(frame) {
    const encoder = this._encoder;
    if (!encoder || encoder.state !== 'configured') return;
    if (encoder.encodeQueueSize > 10) return; // behind: a lost 20 ms is better than a growing delay
    const data = new Float32Array(AUDIO_FRAME_SAMPLES);
    let sum = 0;
    for (let index = 0; index < AUDIO_FRAME_SAMPLES; index++) {
      const sample = Math.max(-1, Math.min(1, frame[index] * this._gain));
      data[index] = sample;
      sum += sample * sample;
    }
    this._levels.push(audioLevel(sum, AUDIO_FRAME_SAMPLES));
    if (this._levels.length > 50) this._levels.shift();
    const audio = new AudioData({
      format: 'f32', sampleRate: AUDIO_SAMPLE_RATE, numberOfFrames: AUDIO_FRAME_SAMPLES, numberOfChannels: 1,
      timestamp: nowMicroseconds(), data,
    });
    try {
      encoder.encode(audio);
    } catch (error) {
      this.stats.encodeErrors++;
      log.warn('audio encode failed', error);
    } finally {
      audio.close();
    }
  }

  _encoded(chunk) {
    const level = this._levels.shift() ?? this._level;
    this._level = level;
    const info = { level, captureUs: chunk.timestamp };
    for (const sink of this._sinks) {
      try {
        sink.sendAudio(chunk, info);
      } catch (error) {
        log.error('sending an audio frame failed', error);
      }
    }
  }
}

function firstChannel(data) {
  const samples = new Float32Array(data.numberOfFrames);
  try {
    data.copyTo(samples, { planeIndex: 0, format: 'f32-planar' });
  } catch {
    // Formats that cannot convert: interleaved f32, first channel taken.
    const all = new Float32Array(data.numberOfFrames * data.numberOfChannels);
    data.copyTo(all, { planeIndex: 0 });
    for (let index = 0; index < data.numberOfFrames; index++) samples[index] = all[index * data.numberOfChannels];
  }
  return samples;
}

// ------------------------------------------------------------------------------------------------
// Remote video

/** Frames a decoder may have queued before the track drops to the next keyframe. */
const MAX_DECODE_QUEUE = 30;

/**
 * A remote user's video: VP8 decoded from the first keyframe on, drawn into a canvas while
 * played. The last decoded frame is kept, so play() shows a picture at once.
 */
export class RemoteVideoTrack extends Emitter {
  constructor(uid, stats, onFirstFrame) {
    super();
    this.trackMediaType = 'video';
    this.isPlaying = false;
    this._uid = uid;
    this._stats = stats;
    this._onFirstFrame = onFirstFrame;
    this._decoder = null;
    this._waitingForKeyframe = true;
    this._lastFrame = null;
    this._canvas = null;
    this._context = null;
    this._fit = 'cover';
    this._closed = false;
    this._firstFrameReported = false;
  }

  getUserId() {
    return this._uid;
  }

  getTrackId() {
    return `remote-video-${this._uid}`;
  }

  /** Draws the video into a canvas created in `element` (the last picture at once, then live). */
  play(target, config = {}) {
    const element = resolveElement(target);
    this.stop();
    this._fit = config.fit === 'contain' ? 'contain' : 'cover';
    const canvas = document.createElement('canvas');
    canvas.style.cssText = `width:100%;height:100%;object-fit:${this._fit};display:block;${config.mirror ? 'transform:scaleX(-1);' : ''}`;
    canvas.dataset.showroomUid = String(this._uid);
    element.appendChild(canvas);
    this._canvas = canvas;
    this._context = canvas.getContext('2d', { alpha: false, desynchronized: true });
    this.isPlaying = true;
    if (this._lastFrame) this._draw(this._lastFrame);
  }

  /** Stops drawing and removes the canvas; decoding goes on while subscribed. */
  stop() {
    this._canvas?.remove();
    this._canvas = null;
    this._context = null;
    this.isPlaying = false;
  }

  /** The picture shown last, as ImageData (null before the first frame). */
  getCurrentFrameData() {
    const frame = this._lastFrame;
    if (!frame) return null;
    const canvas = new OffscreenCanvas(frame.displayWidth, frame.displayHeight);
    const context = canvas.getContext('2d');
    context.drawImage(frame, 0, 0);
    return context.getImageData(0, 0, canvas.width, canvas.height);
  }

  getStats() {
    return { ...this._stats };
  }

  /** The next frames come from a new source (a rejoin, a move): decode from a keyframe again. */
  _restart() {
    this._waitingForKeyframe = true;
    this._firstFrameReported = false;
  }

  /** A frame from the edge. */
  _receive(header, payload) {
    if (this._closed) return;
    const stats = this._stats;
    stats.framesReceived++;
    stats.receiveBytes += payload.byteLength;
    if (header.keyframe) stats.keyframesReceived++;
    if (header.width) {
      stats.receiveResolutionWidth = header.width;
      stats.receiveResolutionHeight = header.height;
    }
    if (this._waitingForKeyframe && !header.keyframe) {
      stats.framesDropped++;
      return;
    }
    let decoder = this._decoder;
    if (decoder && decoder.state === 'closed') {
      // Closed under us (by an error the callback has not reported): a delta frame cannot start a new one.
      this._decodeFailed(decoder, new DOMException('the decoder closed', 'InvalidStateError'));
      if (!header.keyframe) {
        stats.framesDropped++;
        return;
      }
    }
    decoder = this._decoder;
    if (!decoder) decoder = this._makeDecoder();
    if (decoder.decodeQueueSize > MAX_DECODE_QUEUE) {
      // The page cannot keep up: skip to the next keyframe rather than fall further behind.
      stats.framesDropped++;
      this._waitingForKeyframe = true;
      return;
    }
    try {
      decoder.decode(new EncodedVideoChunk({
        type: header.keyframe ? 'key' : 'delta',
        timestamp: Number(header.captureTimeUs),
        data: payload,
      }));
      this._waitingForKeyframe = false;
    } catch (error) {
      this._decodeFailed(decoder, error);
    }
  }

  _makeDecoder() {
    const decoder = new VideoDecoder({
      output: (frame) => this._decoded(frame),
      error: (error) => this._decodeFailed(decoder, error),
    });
    decoder.configure({ codec: 'vp8', optimizeForLatency: true });
    this._decoder = decoder;
    return decoder;
  }

  /**
   * A frame `decoder` refused (as the Swift SDK's sink): counted once, the decoder reset (what it
   * holds refers to the lost picture; a new one is made at the next keyframe), and frames skipped
   * until that keyframe. The last picture stays on screen meanwhile.
   */
  _decodeFailed(decoder, error) {
    if (decoder !== this._decoder || this._closed) return; // a replaced decoder's late report
    this._stats.decodeErrors++;
    log.debug(`video of ${this._uid} failed to decode; waiting for a keyframe`, error);
    this._waitingForKeyframe = true;
    this._decoder = null;
    if (decoder.state !== 'closed') {
      try {
        decoder.close();
      } catch {
        // Closed by the error meanwhile.
      }
    }
    this.emit('decode-error', error);
  }

  _decoded(frame) {
    if (this._closed) {
      frame.close();
      return;
    }
    this._stats.framesDecoded++;
    this._lastFrame?.close();
    this._lastFrame = frame;
    if (!this._firstFrameReported) {
      this._firstFrameReported = true;
      this._onFirstFrame?.(frame);
    }
    if (this._context) this._draw(frame);
  }

  _draw(frame) {
    const canvas = this._canvas;
    if (canvas.width !== frame.displayWidth || canvas.height !== frame.displayHeight) {
      canvas.width = frame.displayWidth;
      canvas.height = frame.displayHeight;
    }
    this._context.drawImage(frame, 0, 0);
  }

  /** Unsubscribed: the decoder and the kept frame go. */
  _close() {
    this._closed = true;
    this.stop();
    if (this._decoder && this._decoder.state !== 'closed') this._decoder.close();
    this._decoder = null;
    this._lastFrame?.close();
    this._lastFrame = null;
  }
}

// ------------------------------------------------------------------------------------------------
// Remote audio

/** Audio scheduled ahead of the output clock (absorbs network jitter). */
const JITTER_SECONDS = 0.06;
/** More than this scheduled ahead and the queue is dropped (a burst after a stall). */
const MAX_AHEAD_SECONDS = 0.4;

/** A remote user's audio: Opus decoded while subscribed, played through Web Audio while played. */
export class RemoteAudioTrack extends Emitter {
  constructor(uid, stats) {
    super();
    this.trackMediaType = 'audio';
    this.isPlaying = false;
    this._uid = uid;
    this._stats = stats;
    this._decoder = null;
    this._gain = null;
    this._volume = 1;
    this._playhead = 0;
    this._level = 0;
    this._closed = false;
  }

  getUserId() {
    return this._uid;
  }

  getTrackId() {
    return `remote-audio-${this._uid}`;
  }

  /** Plays through the page's AudioContext. */
  play() {
    const context = ensureAudioRunning();
    if (!this._gain) {
      this._gain = context.createGain();
      this._gain.gain.value = this._volume;
      this._gain.connect(context.destination);
    }
    this.isPlaying = true;
  }

  stop() {
    this._gain?.disconnect();
    this._gain = null;
    this._playhead = 0;
    this.isPlaying = false;
  }

  /** Playback volume 0 – 100 (up to 1000 amplifies). */
  setVolume(volume) {
    this._volume = Math.max(0, Math.min(1000, Number(volume))) / 100;
    if (this._gain) this._gain.gain.value = this._volume;
  }

  /** The level of the last decoded frame, 0 – 1. */
  getVolumeLevel() {
    return this._level / 100;
  }

  getStats() {
    return { ...this._stats };
  }

  _receive(header, payload) {
    if (this._closed) return;
    this._stats.framesReceived++;
    this._stats.receiveBytes += payload.byteLength;
    let decoder = this._decoder;
    if (!decoder || decoder.state === 'closed') {
      decoder = new AudioDecoder({
        output: (data) => this._decoded(data),
        error: (error) => {
          this._stats.decodeErrors++;
          log.debug(`audio of ${this._uid} failed to decode`, error);
          this._decoder = null;
        },
      });
      decoder.configure({ codec: 'opus', sampleRate: AUDIO_SAMPLE_RATE, numberOfChannels: 1 });
      this._decoder = decoder;
    }
    if (decoder.decodeQueueSize > 50) return;
    try {
      decoder.decode(new EncodedAudioChunk({ type: 'key', timestamp: Number(header.captureTimeUs), data: payload }));
    } catch (error) {
      this._stats.decodeErrors++;
      this._decoder = null;
    }
  }

  _decoded(data) {
    try {
      this._stats.framesDecoded++;
      const samples = firstChannel(data);
      let sum = 0;
      for (const sample of samples) sum += sample * sample;
      this._level = audioLevel(sum, samples.length);
      if (!this.isPlaying || !this._gain) return;
      const context = getAudioContext();
      const buffer = context.createBuffer(1, samples.length, data.sampleRate);
      buffer.copyToChannel(samples, 0);
      const now = context.currentTime;
      if (this._playhead < now + 0.005 || this._playhead > now + MAX_AHEAD_SECONDS) this._playhead = now + JITTER_SECONDS;
      const source = context.createBufferSource();
      source.buffer = buffer;
      source.connect(this._gain);
      source.start(this._playhead);
      this._playhead += buffer.duration;
    } finally {
      data.close();
    }
  }

  _close() {
    this._closed = true;
    this.stop();
    if (this._decoder && this._decoder.state !== 'closed') this._decoder.close();
    this._decoder = null;
  }
}
