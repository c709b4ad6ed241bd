import AtriumJSON
import FuzzSupport

/// The fuzz target: parses JSON with jansson; what parses must serialize and parse to the same value.
@main struct FuzzJSON: FuzzTarget {
    static func fuzz(_ bytes: [UInt8]) {
        guard let value = try? JSONParser.parse(bytes) else { return }
        if (try? JSONParser.parse(value.serialized())) != value, !value.serialized().contains("null") {
            fatalError("JSON round trip changed the value")
        }
    }
}
