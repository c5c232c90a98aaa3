/// What `p2p send` and `p2p receive` share.
enum TransferSession {
    /// Senders and receivers meet in their own session, apart from chats and games.
    static let id = "files"
}
