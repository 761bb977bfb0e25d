# What `cmake --install` puts where, and the Debian package CPack makes of it
# (docs/packaging.md): the binary in /usr/sbin, the systemd unit, an example
# config in /etc/sluice (the real one is the operator's), the docs.
include(GNUInstallDirs)
# `cpack` (and `sluice cluster up`, which runs it) packages the built binary
# without first building every test and benchmark.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)

install(TARGETS sluice RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR} COMPONENT sluice)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/sluice.service DESTINATION lib/systemd/system COMPONENT sluice)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/sluice.yaml.example DESTINATION /etc/sluice COMPONENT sluice)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT sluice)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT sluice
        FILES_MATCHING PATTERN "*.md" PATTERN "*.svg")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME sluice)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "sluice developers <sluice@example.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "stateful zone firewall with an XDP/TC fast path")
set(CPACK_PACKAGE_DESCRIPTION "sluice binds interfaces to zones and decides flows by ordered policies; \
sessions, NAT, screens and host protection run in XDP and TC, controlled by one program, sluice.")
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};sluice;sluice;/")
set(CPACK_COMPONENTS_ALL sluice)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
# Shared libraries (libbpf, libxdp, hyperscan, yaml-cpp, libnl) from
# dpkg-shlibdeps; the tools sluice runs, by name.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "iproute2")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "iperf3, linux-perf, nftables")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${PROJECT_SOURCE_DIR}/packaging/postinst;${PROJECT_SOURCE_DIR}/packaging/prerm;${PROJECT_SOURCE_DIR}/packaging/conffiles")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
include(CPack)
