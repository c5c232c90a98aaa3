import P2P

/// The connection rule's old name, kept while ReceiveLoop still uses it: ReceiveLoop moves to
/// `ConnectionPolicy` next, and this alias goes.
typealias RequestPolicy = ConnectionPolicy
