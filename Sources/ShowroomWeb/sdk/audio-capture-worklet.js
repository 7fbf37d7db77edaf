// Microphone samples for pages without MediaStreamTrackProcessor (Firefox, Safari): the first
// channel of each 128-frame render quantum, posted to the page in batches of about 10 ms.

class ShowroomAudioCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.batch = new Float32Array(512);
    this.filled = 0;
  }

  process(inputs) {
    const channel = inputs[0]?.[0];
    if (channel) {
      if (this.filled + channel.length > this.batch.length) this.flush();
      this.batch.set(channel, this.filled);
      this.filled += channel.length;
      if (this.filled >= 384) this.flush();
    }
    return true;
  }

  flush() {
    if (this.filled === 0) return;
    const samples = this.batch.slice(0, this.filled);
    this.port.postMessage({ samples, sampleRate }, [samples.buffer]);
    this.filled = 0;
  }
}

registerProcessor('showroom-audio-capture', ShowroomAudioCapture);
