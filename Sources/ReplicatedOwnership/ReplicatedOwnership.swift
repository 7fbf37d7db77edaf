// Replicated ownership: one mechanism for every keyed state a role keeps for the cluster.
//
// Rules (see ``Replication``):
// - The owner of a key is the first alive member of the role in rendezvous order (``OwnerRing``);
//   its successor, the second, holds a replica. Cluster-wide tables are held by every member.
// - A write is made at the owner, sent to the other holders, and acknowledged to the client only
//   when each has answered; a replica that fails or leaves first is noted (`fullyReplicated`
//   false) and the write is acknowledged, since waiting for a member that is gone would block the
//   key until the membership settles.
// - When the alive members change, each member hands every key's new holders what it holds of
//   that key, and receivers keep the higher version (ties: the greater writer id). A restarted
//   member reloads its persisted state and is handed the rest when the others see it join.
//
// Operations on two keys with different owners (a PK between two rooms) use this protocol:
//
// 1. The owner of the key that got the decision (the room whose host accepts) coordinates. It
//    writes an intent on its key (the interaction id, both keys, an expiry) and has it replicated
//    before it asks anyone. The intent is a lock: the key counts as busy while it stands, and a
//    commit never waits for anything, so two decisions touching the same key never deadlock; the
//    later one is refused as busy. (Where both sides decide at once — two rooms inviting each
//    other — the lower key coordinates.)
// 2. It asks the other key's owner to commit. That owner checks its key (idle, live), writes the
//    interaction as active on its key, has it replicated, and only then answers yes; or answers no
//    without writing anything. The answer is idempotent per interaction id: asked again, it says
//    what it decided.
// 3. On yes the coordinator commits its own key; on no, or when the intent expires unanswered, it
//    drops the intent and sends an abort (idempotent; it ends the interaction on the other key if
//    that one had committed and its answer was lost).
//
// Why no failure leaves half a PK: every decision is replicated before it is announced, so a
// successor taking over either key finds the intent or the commit. A successor of the
// coordinating key that finds an intent asks again (step 2 answers the same), and commits or
// aborts; a successor of the other key answers from the replicated commit. An intent never
// outlives its expiry: after it, the coordinator aborts and both keys end idle. The other side
// never starts anything on its own, so the only half state, "committed there, intent here", is
// resolved by the coordinator's retry or abort within one expiry.
