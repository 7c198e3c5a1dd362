/* A camera-like RTSP server for the VDEC tests: serves the H.264 track of an MP4 file as
 * rtsp://127.0.0.1:PORT/cam (RTP/H.264 at the clip's frame rate, one session per client, from the first
 * frame) with GStreamer's rtsp-server library. The MP4 gives every frame its timestamp (a raw Annex-B
 * file would not). Picks a free port, or listens on PORT when given (a camera that restarts: the reconnect
 * tests kill the server and start it again on the same port), and prints "PORT <n>" on stdout once it
 * listens; the test kills it.
 *   kes_rtsp_test_server CLIP.mp4 [PORT]
 */
#include <gst/gst.h>
#include <gst/rtsp-server/rtsp-server.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
    gst_init(&argc, &argv);
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s CLIP.mp4 [PORT]\n", argv[0]);
        return 2;
    }
    alarm(300); /* never outlive a crashed test */
    GMainLoop* loop = g_main_loop_new(NULL, FALSE);
    GstRTSPServer* server = gst_rtsp_server_new();
    gst_rtsp_server_set_address(server, "127.0.0.1");
    gst_rtsp_server_set_service(server, argc == 3 ? argv[2] : "0"); /* "0": any free port */
    GstRTSPMountPoints* mounts = gst_rtsp_server_get_mount_points(server);
    GstRTSPMediaFactory* factory = gst_rtsp_media_factory_new();
    gchar* launch = g_strdup_printf(
        "( filesrc location=\"%s\" ! qtdemux ! h264parse ! rtph264pay name=pay0 pt=96 config-interval=-1 )", argv[1]);
    gst_rtsp_media_factory_set_launch(factory, launch);
    g_free(launch);
    gst_rtsp_media_factory_set_shared(factory, FALSE);
    gst_rtsp_mount_points_add_factory(mounts, "/cam", factory);
    g_object_unref(mounts);
    if (gst_rtsp_server_attach(server, NULL) == 0) {
        fprintf(stderr, "rtsp server: cannot listen\n");
        return 1;
    }
    printf("PORT %d\n", gst_rtsp_server_get_bound_port(server));
    fflush(stdout);
    g_main_loop_run(loop);
    return 0;
}
