/// Whose schema a snapshot carries, and so which rules judge its records (Protocol/RECORDS.md §6, §8).
public enum SchemaAuthority: Sendable, Hashable {
    /// A file the person chose (`p2p records import`): its constraints judge its records and are
    /// adopted by the store when its version is at least the store's.
    case person
    /// A peer: its records are judged by the store's own constraints. The peer's constraints (patterns,
    /// ranges, lengths, rules) are neither run nor installed: a pattern like `(a|aa)+` would run without
    /// limit inside the store's transaction, and installed it would judge every later snapshot. New
    /// entities and attributes arrive as columns only; the person adopts rules by importing a schema.
    case peer
}

extension RecordSchema {
    /// The schema's shape without what judges values: patterns, ranges, lengths and rules gone;
    /// types, optionality, defaults and relationships kept. What a peer's snapshot may bring into a
    /// store (``SchemaAuthority/peer``).
    var withoutConstraints: RecordSchema {
        var schema = self
        for index in schema.entities.indices {
            schema.entities[index].rules = []
            for member in schema.entities[index].attributes.indices {
                schema.entities[index].attributes[member].pattern = nil
                schema.entities[index].attributes[member].minimum = nil
                schema.entities[index].attributes[member].maximum = nil
                schema.entities[index].attributes[member].minLength = nil
                schema.entities[index].attributes[member].maxLength = nil
            }
        }
        return schema
    }
}
