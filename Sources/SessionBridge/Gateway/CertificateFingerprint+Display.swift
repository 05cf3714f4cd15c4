extension CertificateFingerprint {
    /// `AB:CD:...` groups, the form people compare fingerprints in.
    package static func display(_ hex: String) -> String {
        var groups: [String] = []
        var rest = Substring(hex)
        while !rest.isEmpty {
            groups.append(rest.prefix(2).uppercased())
            rest = rest.dropFirst(2)
        }
        return groups.joined(separator: ":")
    }
}
