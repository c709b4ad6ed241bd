/// A reference the packet path follows without retaining or releasing it (no reference
/// counting per forwarded packet).
///
/// A class reference loaded from an array, a dictionary or a `var` property is retained for as long
/// as the compiler cannot prove the storage keeps it alive, which across the calls of the packet path
/// is always; an `unowned` one is retained too (`swift_unownedRetainStrong`). `Unmanaged`'s guaranteed
/// access is the one way to reach the object with neither. The object must outlive every `with`
/// call: a `Borrowed` is only kept next to the strong reference that owns it (the engine's tables,
/// `Producer.consumers`, `Transport.srtpOut`), which the worker thread changes between packets, never
/// during one.
struct Borrowed<Object: AnyObject> {
    private let reference: Unmanaged<Object>

    init(_ object: Object) { reference = .passUnretained(object) }

    /// Calls `body` with the object, alive for the call, without touching its reference count.
    @inline(__always)
    func with<Result>(_ body: (Object) -> Result) -> Result { reference._withUnsafeGuaranteedRef(body) }

    /// Whether this is a reference to `object`.
    @inline(__always)
    func refers(to object: Object) -> Bool { reference.toOpaque() == Unmanaged.passUnretained(object).toOpaque() }
}
