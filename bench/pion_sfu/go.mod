module atrium/pion_sfu

go 1.19
