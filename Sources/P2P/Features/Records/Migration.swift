import Foundation
import GRDB

/// How a store's schema becomes one that also describes a snapshot: lightweight changes only
/// (new entities; new optional or defaulted attributes; new optional to-one relationships).
/// Anything else is refused with the reason, before anything is written.
struct Migration {
    /// The store's schema afterwards.
    var schema: RecordSchema
    var statements: [String] = []
    var changes: [String] = []
    /// Columns each existing table has before the migration.
    var existingColumns: [String: Set<String>] = [:]

    /// `adoptsConstraints`: the snapshot's wording of shared members wins when its version is at least
    /// the store's (a file the person imports); false for a peer's snapshot, whose version, name and
    /// constraints never replace the store's.
    init(store: RecordSchema?, snapshot: RecordSchema, adoptsConstraints: Bool = true) throws(RecordsError) {
        guard let store else {
            schema = snapshot
            for entity in snapshot.entities { add(entity) }
            return
        }
        schema = store
        if store == snapshot {
            for entity in store.entities { existingColumns[entity.name] = Self.columns(of: entity) }
            return
        }
        var issues: [SchemaIssue] = []
        // The snapshot's wording of shared attributes (ranges, patterns, rules) wins when its schema is
        // at least as new; the store's stays otherwise. Columns are added either way.
        let snapshotIsNewer = adoptsConstraints && snapshot.version >= store.version
        if adoptsConstraints { schema.version = max(store.version, snapshot.version) }
        if snapshotIsNewer, let name = snapshot.name { schema.name = name }
        for theirs in snapshot.entities {
            guard let index = schema.entities.firstIndex(where: { $0.name == theirs.name }) else {
                if schema.entities.contains(where: { $0.name.lowercased() == theirs.name.lowercased() }) {
                    issues.append(SchemaIssue(entity: theirs.name, member: nil, message: "the store has an entity whose name differs only in case"))
                    continue
                }
                schema.entities.append(theirs)
                add(theirs)
                continue
            }
            let mine = schema.entities[index]
            existingColumns[mine.name] = Self.columns(of: mine)
            var merged = snapshotIsNewer ? theirs : mine
            for attribute in theirs.storedAttributes {
                guard let local = mine.attribute(named: attribute.name), !local.transient else {
                    if !attribute.optional && attribute.defaultValue == nil {
                        issues.append(SchemaIssue(entity: theirs.name, member: attribute.name,
                            message: "is new and required without a default, so the store's existing records would have no value; make it optional or give it a default"))
                        continue
                    }
                    statements.append("ALTER TABLE \(RecordStore.quote(theirs.name)) ADD COLUMN \(Self.columnDefinition(attribute))")
                    changes.append("added attribute \(theirs.name).\(attribute.name)")
                    if !snapshotIsNewer { merged.attributes.append(attribute) }
                    continue
                }
                if local.type != attribute.type {
                    issues.append(SchemaIssue(entity: theirs.name, member: attribute.name,
                        message: "is \(local.type.rawValue) in the store and \(attribute.type.rawValue) in the snapshot; changing a type needs a migration p2p cannot make"))
                } else if !local.optional && attribute.optional {
                    issues.append(SchemaIssue(entity: theirs.name, member: attribute.name,
                        message: "is required in the store but optional in the snapshot, so its records could lack a value the store requires"))
                }
                if let index = merged.attributes.firstIndex(where: { $0.name == attribute.name }) {
                    merged.attributes[index].optional = local.optional  // Never stricter than the rows already stored.
                }
            }
            for local in mine.storedAttributes where theirs.attribute(named: local.name).map({ $0.transient }) ?? true {
                if !local.optional && local.defaultValue == nil {
                    issues.append(SchemaIssue(entity: theirs.name, member: local.name,
                        message: "is required in the store without a default, and the snapshot's schema does not have it"))
                }
                if snapshotIsNewer && merged.attribute(named: local.name) == nil { merged.attributes.append(local) }
            }
            for relationship in theirs.relationships {
                guard let local = mine.relationship(named: relationship.name) else {
                    if !relationship.toMany {
                        if !relationship.optional {
                            issues.append(SchemaIssue(entity: theirs.name, member: relationship.name,
                                message: "is a new required relationship, so the store's existing records would have no target; make it optional"))
                            continue
                        }
                        statements.append("ALTER TABLE \(RecordStore.quote(theirs.name)) ADD COLUMN \(Self.relationshipColumn(relationship, in: snapshot))")
                    }
                    changes.append("added relationship \(theirs.name).\(relationship.name)")
                    if !snapshotIsNewer { merged.relationships.append(relationship) }
                    continue
                }
                if local.destination != relationship.destination || local.toMany != relationship.toMany {
                    issues.append(SchemaIssue(entity: theirs.name, member: relationship.name,
                        message: "points to \(local.toMany ? "many" : "one") \(local.destination) in the store and to \(relationship.toMany ? "many" : "one") \(relationship.destination) in the snapshot"))
                } else if !local.optional && relationship.optional {
                    issues.append(SchemaIssue(entity: theirs.name, member: relationship.name,
                        message: "is required in the store but optional in the snapshot"))
                }
            }
            for local in mine.relationships where theirs.relationship(named: local.name) == nil {
                if !local.toMany && !local.optional {
                    issues.append(SchemaIssue(entity: theirs.name, member: local.name,
                        message: "is a required relationship in the store, and the snapshot's schema does not have it"))
                }
                if snapshotIsNewer { merged.relationships.append(local) }
            }
            // The hash the stored JSON declared was for the entity before the columns added here.
            merged.declaredVersionHash = nil
            schema.entities[index] = merged
        }
        if issues.isEmpty {
            for issue in schema.problems() {
                issues.append(SchemaIssue(entity: issue.entity, member: issue.member, message: "after merging the schemas: \(issue.message)"))
            }
        }
        guard issues.isEmpty else { throw .incompatibleSchema(issues) }
    }

    private mutating func add(_ entity: EntityDescription) {
        var columns = ["id TEXT PRIMARY KEY NOT NULL", "_modified INTEGER NOT NULL", "_origin TEXT NOT NULL", "_seq INTEGER NOT NULL"]
        columns += entity.storedAttributes.map(Self.columnDefinition)
        columns += entity.storedRelationships.map { Self.relationshipColumn($0, in: schema) }
        let table = RecordStore.quote(entity.name)
        // WITHOUT ROWID: the table is its primary-key index, so an insert updates one B-tree fewer.
        statements.append("CREATE TABLE \(table) (\(columns.joined(separator: ", "))) WITHOUT ROWID")
        statements.append("CREATE INDEX \(RecordStore.quote("\(entity.name)_seq")) ON \(table) (_seq)")
        for relationship in entity.storedRelationships {
            // Deleting a target looks up the records that point to it.
            statements.append("CREATE INDEX \(RecordStore.quote("\(entity.name)_\(relationship.name)")) ON \(table) (\(RecordStore.quote(relationship.name)))")
        }
        changes.append("created entity \(entity.name)")
    }

    static func columns(of entity: EntityDescription) -> Set<String> {
        Set(entity.storedAttributes.map(\.name) + entity.storedRelationships.map(\.name))
    }

    static func columnDefinition(_ attribute: AttributeDescription) -> String {
        var definition = "\(RecordStore.quote(attribute.name)) \(RecordStore.sqlType(attribute.type))"
        if let value = attribute.defaultValue { definition += " DEFAULT \(RecordStore.sqlLiteral(value))" }
        return definition
    }

    /// A to-one relationship's column: a foreign key whose delete action is the delete rule of the
    /// inverse to-many relationship (deleting a Hero cascades to its powers).
    static func relationshipColumn(_ relationship: RelationshipDescription, in schema: RecordSchema) -> String {
        let rule = relationship.inverse.flatMap { schema.entity(named: relationship.destination)?.relationship(named: $0) }?.deleteRule ?? .nullify
        let action: String
        switch rule {
        case .nullify: action = "SET NULL"
        case .cascade: action = "CASCADE"
        case .deny: action = "RESTRICT"
        case .noAction:
            // Core Data's "no action" leaves references dangling, which a foreign key would refuse.
            return "\(RecordStore.quote(relationship.name)) TEXT"
        }
        // Deferred, so a snapshot may list a record before the record it points to.
        return "\(RecordStore.quote(relationship.name)) TEXT REFERENCES \(RecordStore.quote(relationship.destination)) (id) ON DELETE \(action) DEFERRABLE INITIALLY DEFERRED"
    }
}
