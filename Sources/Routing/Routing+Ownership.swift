// Placement and relays are decided over an ``OwnerRing`` of edges: whoever imports Routing sees
// the roles, rings and rendezvous hashing too.
@_exported import Ownership
