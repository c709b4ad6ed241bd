// pion_sfu: the minimal SFU the benchmarks measure Atrium against beside Janus, on pion v3 (the Go
// WebRTC stack LiveKit is built on), as its examples forward: one goroutine per published track reads
// its RTP and writes it to a TrackLocalStaticRTP that every subscriber's connection carries. VP8 and
// Opus only, host candidates on 127.0.0.1, no RTCP handling beyond reading it.
//
// HTTP API (JSON, on 127.0.0.1:PORT):
//
//	POST /publish   {"sdp": offer}       -> {"sdp": answer}             (one publisher at a time)
//	POST /subscribe {}                   -> {"id": n, "sdp": offer}     (every published track)
//	POST /answer    {"id": n, "sdp": a}  -> {}
//	GET  /health                         -> {"tracks": n, "subscribers": n}
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
	"sync"

	"github.com/pion/interceptor"
	"github.com/pion/webrtc/v3"
)

type sfu struct {
	api         *webrtc.API
	mu          sync.Mutex
	tracks      []*webrtc.TrackLocalStaticRTP
	publisher   *webrtc.PeerConnection
	subscribers map[int]*webrtc.PeerConnection
	next        int
	expected    int
	ready       chan struct{}
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

// localDescription sets d and waits for every candidate (no trickle on this API).
func localDescription(pc *webrtc.PeerConnection, d webrtc.SessionDescription) (string, error) {
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(d); err != nil {
		return "", err
	}
	<-gathered
	return pc.LocalDescription().SDP, nil
}

func (s *sfu) publish(w http.ResponseWriter, r *http.Request) {
	var body sdpBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		fail(w, 400, err)
		return
	}
	pc, err := s.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		fail(w, 500, err)
		return
	}
	offer := webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: body.SDP}
	pc.OnTrack(func(remote *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		local, err := webrtc.NewTrackLocalStaticRTP(remote.Codec().RTPCodecCapability, remote.ID(), remote.StreamID())
		if err != nil {
			log.Printf("track: %v", err)
			return
		}
		s.mu.Lock()
		s.tracks = append(s.tracks, local)
		if len(s.tracks) == s.expected {
			close(s.ready)
		}
		s.mu.Unlock()
		// One goroutine per published track: each packet to every subscriber's track.
		buf := make([]byte, 1500)
		for {
			n, _, err := remote.Read(buf)
			if err != nil {
				return
			}
			_, _ = local.Write(buf[:n]) // a subscriber gone is not the publisher's end
		}
	})
	if err := pc.SetRemoteDescription(offer); err != nil {
		fail(w, 400, err)
		return
	}
	s.mu.Lock()
	s.publisher, s.expected, s.ready = pc, len(pc.GetTransceivers()), make(chan struct{})
	s.mu.Unlock()
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
	reply(w, sdpBody{SDP: sdp})
}

func (s *sfu) subscribe(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ready := s.ready
	s.mu.Unlock()
	if ready == nil {
		fail(w, 409, fmt.Errorf("nothing published"))
		return
	}
	<-ready // every published track has arrived
	pc, err := s.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		fail(w, 500, err)
		return
	}
	s.mu.Lock()
	tracks := append([]*webrtc.TrackLocalStaticRTP(nil), s.tracks...)
	s.mu.Unlock()
	for _, t := range tracks {
		sender, err := pc.AddTrack(t)
		if err != nil {
			fail(w, 500, err)
			return
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
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		fail(w, 500, err)
		return
	}
	sdp, err := localDescription(pc, offer)
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

func (s *sfu) answer(w http.ResponseWriter, r *http.Request) {
	var body sdpBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		fail(w, 400, err)
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
	reply(w, map[string]int{"tracks": len(s.tracks), "subscribers": len(s.subscribers)})
}

func main() {
	port := flag.Int("port", 0, "HTTP port on 127.0.0.1")
	flag.Parse()
	api, err := newAPI()
	if err != nil {
		log.Fatal(err)
	}
	s := &sfu{api: api, subscribers: map[int]*webrtc.PeerConnection{}}
	http.HandleFunc("/publish", s.publish)
	http.HandleFunc("/subscribe", s.subscribe)
	http.HandleFunc("/answer", s.answer)
	http.HandleFunc("/health", s.health)
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening port=%d\n", l.Addr().(*net.TCPAddr).Port)
	log.Fatal(http.Serve(l, nil))
}
