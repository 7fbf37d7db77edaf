// The channel plane speaks the client↔edge vocabulary in its API (requests, replies, events,
// tracks, roles), so `import Edge` brings it along: server code and tests keep one import.
@_exported import EdgeProtocol
