import Testing

@testable import AtriumForwarding

/// The viewer's wish as a spatial layer: VideoSDK's quality mapping and the viewport rule, as tables.
@Suite struct LayerChoiceTests {
    typealias Q = LayerChoice.Quality
    static let camera = [
        LayerChoice.Size(width: 320, height: 180), LayerChoice.Size(width: 640, height: 360),
        LayerChoice.Size(width: 1280, height: 720),
    ]

    @Test(
        arguments: [
            (Q.low, 3, 0), (.medium, 3, 1), (.high, 3, 2),
            (.low, 2, 0), (.medium, 2, 0), (.high, 2, 1),
            (.low, 1, 0), (.medium, 1, 0), (.high, 1, 0), (.high, 0, 0),
        ] as [(Q, Int, Int)])
    func quality(_ q: Q, _ count: Int, _ expected: Int) {
        #expect(LayerChoice.spatial(quality: q, layerCount: count) == expected)
    }

    @Test(arguments: [
        (160, 90, 0), (320, 180, 0), (321, 180, 1), (640, 200, 1), (641, 360, 2), (1280, 720, 2),
        (1920, 1080, 2), (200, 400, 2),
    ])
    func viewport(_ width: Int, _ height: Int, _ expected: Int) {
        #expect(LayerChoice.spatial(covering: .init(width: width, height: height), layers: Self.camera) == expected)
    }

    @Test(
        arguments: [
            // quality, tile, screen share -> layer
            (Q.high, 300, 170, false, 0),  // a small tile: the bottom layer
            (Q.high, 600, 340, false, 1),
            (Q.low, 1280, 720, false, 0),  // the quality caps what the tile would allow
            (Q.medium, 1920, 1080, false, 1),
            (Q.high, 300, 170, true, 2),  // a share ignores the viewport
            (Q.high, 0, 0, false, 2),  // no viewport
        ] as [(Q, Int, Int, Bool, Int)])
    func combined(_ q: Q, _ width: Int, _ height: Int, _ share: Bool, _ expected: Int) {
        let viewport = LayerChoice.Size(width: width, height: height)
        #expect(
            LayerChoice.spatial(quality: q, viewport: viewport, layers: Self.camera, screenShare: share) == expected)
    }

    @Test func unknownSizesCoverNothing() {
        let layers = [LayerChoice.Size(width: 0, height: 0), LayerChoice.Size(width: 0, height: 0)]
        #expect(LayerChoice.spatial(covering: .init(width: 10, height: 10), layers: layers) == 1)
        #expect(LayerChoice.spatial(covering: .init(width: 10, height: 10), layers: []) == 0)
    }
}
