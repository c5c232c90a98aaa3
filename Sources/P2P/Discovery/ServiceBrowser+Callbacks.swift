import CDNSSD

// The dns_sd callbacks of `ServiceBrowser` and what finds the way back from them to the browser.

extension ServiceBrowser {
    /// What a resolve or address query's callback needs to find its way back; immutable, so a query for
    /// the addresses of a resolved instance gets a context of its own.
    final class LookupContext: Sendable {
        struct Resolved {
            var host: String
            var port: UInt16
            var txt: TXTRecord
        }
        unowned let browser: ServiceBrowser
        let key: InstanceKey
        /// Service type and domain as browsed, to resolve again after a failure.
        let type: String
        let domain: String
        /// Set for an address query: what the resolve found.
        let resolved: Resolved?

        init(browser: ServiceBrowser, key: InstanceKey, type: String, domain: String, resolved: Resolved? = nil) {
            self.browser = browser
            self.key = key
            self.type = type
            self.domain = domain
            self.resolved = resolved
        }
    }
}

private func string(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }

let browseReply: DNSServiceBrowseReply = { _, flags, interfaceIndex, code, name, type, domain, context in
    unretained(context, as: ServiceBrowser.self).handleBrowse(
        code: code, flags: flags, interfaceIndex: interfaceIndex, name: string(name), type: string(type), domain: string(domain))
}

let resolveReply: DNSServiceResolveReply = { _, _, _, code, _, host, port, txtLength, txtBytes, context in
    let lookup = unretained(context, as: ServiceBrowser.LookupContext.self)
    let txt = TXTRecord(bytes: UnsafeBufferPointer(start: txtBytes, count: txtBytes == nil ? 0 : Int(txtLength)))
    lookup.browser.handleResolve(lookup, code: code, host: string(host), port: UInt16(bigEndian: port), txt: txt)
}

let addressReply: DNSServiceQueryRecordReply = { _, flags, interfaceIndex, code, _, _, _, length, data, _, context in
    let lookup = unretained(context, as: ServiceBrowser.LookupContext.self)
    let bytes = data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
    lookup.browser.handleAddress(lookup, code: code, flags: flags, interfaceIndex: interfaceIndex, address: bytes)
}
