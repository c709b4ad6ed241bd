// pion_sfu: the minimal SFU the benchmarks measure Atrium against beside Janus, on pion v3 (the Go
// WebRTC stack LiveKit is built on), as its examples forward: one goroutine per published track (per
// simulcast layer, as pion's simulcast example reads each RID's track) reads its RTP and writes it to
// a TrackLocalStaticRTP that the subscribers' connections carry. Rooms of many publishers; a
// subscriber gets every other publisher of its room, and of a simulcast camera the one layer chosen
// for it (no switching: the choice holds for the subscription). VP8 and Opus only, host candidates
// on 127.0.0.1, no RTCP handling beyond reading it.
//
// HTTP API (JSON, on 127.0.0.1:PORT); `room` defaults to "" and `rids` (publisher id -> rid of its
// simulcast camera a subscriber gets) to the lowest layer offered:
//
//	POST /publish   {"room": r, "sdp": offer}                  -> {"id": p, "sdp": answer}
//	POST /subscribe {"room": r, "exclude": p, "rids": {p: rid}} -> {"id": n, "sdp": offer}
//	                 (the tracks of every publisher in the room but `exclude`, each once it arrived)
//	POST /update    {"id": n, "publishers": [p], "rids": {p: rid}} -> {"id": n, "sdp": offer}
//	                 (adds those publishers' tracks to subscriber n: a new offer on its connection)
//	POST /answer    {"id": n, "sdp": a}                          -> {}
//	GET  /health                                                 -> {"tracks": n, "subscribers": n}
//
// Built offline from Debian's golang-go and golang-github-pion-webrtc.v3-dev in GOPATH mode (make
// bench-deps). Usage: pion_sfu -port PORT
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/pion/interceptor"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v3"
)

// A published track: one per media section, one per layer of a simulcast section.
type track struct {
	local *webrtc.TrackLocalStaticRTP
	kind  webrtc.RTPCodecType
	id    string // the publisher's track id (msid), shared by the layers of one section
	rid   string // "" for a single-stream track
}

type publisher struct {
	id       int
	room     string
	pc       *webrtc.PeerConnection
	mu       sync.Mutex
	tracks   []track
	expected int
	ready    chan struct{}
}

type sfu struct {
	api         *webrtc.API
	mu          sync.Mutex
	publishers  map[int]*publisher
	subscribers map[int]*webrtc.PeerConnection
	next        int
}

func newAPI() (*webrtc.API, error) {
	m := &webrtc.MediaEngine{}
	vp8 := webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{
		MimeType: webrtc.MimeTypeVP8, ClockRate: 90000,
		RTCPFeedback: []webrtc.RTCPFeedback{{Type: "nack"}, {Type: "nack", Parameter: "pli"}}}, PayloadType: 96}
	opus := webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{
		MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2, SDPFmtpLine: "minptime=10;useinbandfec=1"},
		PayloadType: 111}
	if err := m.RegisterCodec(vp8, webrtc.RTPCodecTypeVideo); err != nil {
		return nil, err
	}
	if err := m.RegisterCodec(opus, webrtc.RTPCodecTypeAudio); err != nil {
		return nil, err
	}
	// The mid and rid header extensions tell a simulcast layer's SSRC (pion's simulcast example).
	for _, uri := range []string{sdp.SDESMidURI, sdp.SDESRTPStreamIDURI} {
		if err := m.RegisterHeaderExtension(webrtc.RTPHeaderExtensionCapability{URI: uri},
			webrtc.RTPCodecTypeVideo); err != nil {
			return nil, err
		}
	}
	if err := m.RegisterHeaderExtension(webrtc.RTPHeaderExtensionCapability{URI: sdp.SDESMidURI},
		webrtc.RTPCodecTypeAudio); err != nil {
		return nil, err
	}
	// The default interceptors (NACK responder, RTCP reports), as a pion application has them.
	registry := &interceptor.Registry{}
	if err := webrtc.RegisterDefaultInterceptors(m, registry); err != nil {
		return nil, err
	}
	s := webrtc.SettingEngine{}
	s.SetIncludeLoopbackCandidate(true)
	s.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	s.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() && ip.To4() != nil })
	s.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	return webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithInterceptorRegistry(registry),
		webrtc.WithSettingEngine(s)), nil
}

type request struct {
	ID         int               `json:"id,omitempty"`
	Room       string            `json:"room,omitempty"`
	SDP        string            `json:"sdp"`
	Exclude    int               `json:"exclude,omitempty"`
	Publishers []int             `json:"publishers,omitempty"`
	RIDs       map[string]string `json:"rids,omitempty"`
}

type sdpBody struct {
	ID  int    `json:"id,omitempty"`
	SDP string `json:"sdp"`
}

func reply(w http.ResponseWriter, v interface{}) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, err error) {
	w.WriteHeader(status)
	reply(w, map[string]string{"error": err.Error()})
}

// decode reads the request's JSON body into v; on a malformed one it answers 400 and returns false.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		fail(w, 400, err)
		return false
	}
	return true
}

// localDescription sets d and waits for every candidate (no trickle on this API).
func localDescription(pc *webrtc.PeerConnection, d webrtc.SessionDescription) (string, error) {
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(d); err != nil {
		return "", err
	}
	<-gathered
	return pc.LocalDescription().SDP, nil
}

// expectedTracks counts the tracks an offer will bring: one per live media section, one per sent
// rid of a simulcast section.
func expectedTracks(offer string) int {
	n := 0
	for _, section := range strings.Split(offer, "\nm=")[1:] {
		if f := strings.Fields(section); len(f) > 1 && f[1] == "0" {
			continue
		}
		rids := strings.Count(section, "a=rid:")
		if rids == 0 {
			rids = 1
		}
		n += rids
	}
	return n
}

func (s *sfu) publish(w http.ResponseWriter, r *http.Request) {
	var body request
	if !decode(w, r, &body) {
		return
	}
	pc, err := s.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		fail(w, 500, err)
		return
	}
	s.mu.Lock()
	s.next++
	p := &publisher{id: s.next, room: body.Room, pc: pc, expected: expectedTracks(body.SDP), ready: make(chan struct{})}
	s.publishers[p.id] = p
	s.mu.Unlock()
	pc.OnTrack(func(remote *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		name := fmt.Sprintf("p%d-%s-%s", p.id, remote.ID(), remote.RID())
		local, err := webrtc.NewTrackLocalStaticRTP(remote.Codec().RTPCodecCapability, name, fmt.Sprintf("p%d", p.id))
		if err != nil {
			log.Printf("track: %v", err)
			return
		}
		p.mu.Lock()
		p.tracks = append(p.tracks, track{local: local, kind: remote.Kind(), id: remote.ID(), rid: remote.RID()})
		if len(p.tracks) == p.expected {
			close(p.ready)
		}
		p.mu.Unlock()
		// One goroutine per published track (per layer): each packet to every subscriber's track.
		buf := make([]byte, 1500)
		for {
			n, _, err := remote.Read(buf)
			if err != nil {
				return
			}
			_, _ = local.Write(buf[:n]) // a subscriber gone is not the publisher's end
		}
	})
	offer := webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: body.SDP}
	if err := pc.SetRemoteDescription(offer); err != nil {
		fail(w, 400, err)
		return
	}
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		fail(w, 400, err)
		return
	}
	sdp, err := localDescription(pc, answer)
	if err != nil {
		fail(w, 500, err)
		return
	}
	reply(w, sdpBody{ID: p.id, SDP: sdp})
}

// chosen is what a subscriber gets of publisher p: every single-stream track, and of each simulcast
// section the layer `rid` (the lowest offered, the publisher's first, when rid is "" or unknown).
func (p *publisher) chosen(rid string) []*webrtc.TrackLocalStaticRTP {
	<-p.ready // every published track has arrived
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*webrtc.TrackLocalStaticRTP
	taken := map[string]bool{}
	for _, t := range p.tracks {
		if t.rid == "" {
			out = append(out, t.local)
		}
	}
	for _, want := range []string{rid, ""} {
		for _, t := range p.tracks {
			if t.rid != "" && !taken[t.id] && (want == "" || t.rid == want) {
				taken[t.id] = true
				out = append(out, t.local)
			}
		}
	}
	return out
}

// add puts the chosen tracks of `publishers` on pc and returns its new offer.
func (s *sfu) add(pc *webrtc.PeerConnection, publishers []*publisher, rids map[string]string) (string, error) {
	for _, p := range publishers {
		for _, t := range p.chosen(rids[fmt.Sprint(p.id)]) {
			sender, err := pc.AddTrack(t)
			if err != nil {
				return "", err
			}
			go func() { // RTCP from the viewer, read and dropped
				buf := make([]byte, 1500)
				for {
					if _, _, err := sender.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		return "", err
	}
	return localDescription(pc, offer)
}

func (s *sfu) subscribe(w http.ResponseWriter, r *http.Request) {
	var body request
	if !decode(w, r, &body) {
		return
	}
	var publishers []*publisher
	s.mu.Lock()
	for id := 1; id <= s.next; id++ {
		if p := s.publishers[id]; p != nil && p.room == body.Room && id != body.Exclude {
			publishers = append(publishers, p)
		}
	}
	s.mu.Unlock()
	if len(publishers) == 0 {
		fail(w, 409, fmt.Errorf("nothing published"))
		return
	}
	pc, err := s.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		fail(w, 500, err)
		return
	}
	sdp, err := s.add(pc, publishers, body.RIDs)
	if err != nil {
		fail(w, 500, err)
		return
	}
	s.mu.Lock()
	s.next++
	id := s.next
	s.subscribers[id] = pc
	s.mu.Unlock()
	reply(w, sdpBody{ID: id, SDP: sdp})
}

func (s *sfu) update(w http.ResponseWriter, r *http.Request) {
	var body request
	if !decode(w, r, &body) {
		return
	}
	var publishers []*publisher
	s.mu.Lock()
	pc := s.subscribers[body.ID]
	for _, id := range body.Publishers {
		if p := s.publishers[id]; p != nil {
			publishers = append(publishers, p)
		}
	}
	s.mu.Unlock()
	if pc == nil || len(publishers) != len(body.Publishers) {
		fail(w, 404, fmt.Errorf("no subscriber %d or publisher of %v", body.ID, body.Publishers))
		return
	}
	sdp, err := s.add(pc, publishers, body.RIDs)
	if err != nil {
		fail(w, 500, err)
		return
	}
	reply(w, sdpBody{ID: body.ID, SDP: sdp})
}

func (s *sfu) answer(w http.ResponseWriter, r *http.Request) {
	var body sdpBody
	if !decode(w, r, &body) {
		return
	}
	s.mu.Lock()
	pc := s.subscribers[body.ID]
	s.mu.Unlock()
	if pc == nil {
		fail(w, 404, fmt.Errorf("no subscriber %d", body.ID))
		return
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: body.SDP}); err != nil {
		fail(w, 400, err)
		return
	}
	reply(w, struct{}{})
}

func (s *sfu) health(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tracks := 0
	for _, p := range s.publishers {
		p.mu.Lock()
		tracks += len(p.tracks)
		p.mu.Unlock()
	}
	reply(w, map[string]int{"tracks": tracks, "subscribers": len(s.subscribers)})
}

func main() {
	port := flag.Int("port", 0, "HTTP port on 127.0.0.1")
	flag.Parse()
	api, err := newAPI()
	if err != nil {
		log.Fatal(err)
	}
	s := &sfu{api: api, publishers: map[int]*publisher{}, subscribers: map[int]*webrtc.PeerConnection{}}
	http.HandleFunc("/publish", s.publish)
	http.HandleFunc("/subscribe", s.subscribe)
	http.HandleFunc("/update", s.update)
	http.HandleFunc("/answer", s.answer)
	http.HandleFunc("/health", s.health)
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening port=%d\n", l.Addr().(*net.TCPAddr).Port)
	log.Fatal(http.Serve(l, nil))
}
