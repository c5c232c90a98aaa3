/// A command model: its state and its decisions, fed one event at a time in arrival order; what it
/// returns is carried out by the command's driver. Pure, so it is unit-tested without a terminal or
/// sockets (`GameProtocol` and the library's `ChatRoom` have the same shape). Its events are facts the
/// command's handler of the driver's loop worked out (a sender left and nobody is connected now); a
/// model that takes the driver's inputs as they come is a `DrivenModel`, which the loop feeds itself.
protocol CommandModel {
    associatedtype Event
    associatedtype Effect
    mutating func handle(_ event: Event) -> [Effect]
}
