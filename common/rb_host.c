/* rb_host: see rb_host.h. */
#include "rb_host.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

void rb_host_read(rb_host *h)
{
    memset(h, 0, sizeof *h);
    strcpy(h->cpu_model, "unknown");
    strcpy(h->kernel, "unknown");
    strcpy(h->hostname, "unknown");
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (fp) {
        char line[512];
        while (fgets(line, sizeof line, fp)) {
            if (strncmp(line, "model name", 10) != 0) continue;
            char *colon = strchr(line, ':');
            if (!colon) continue;
            colon++;
            while (*colon == ' ' || *colon == '\t')
                colon++;
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(h->cpu_model, sizeof h->cpu_model, "%s", colon);
            break;
        }
        fclose(fp);
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    h->cores_online = n > 0 ? (int)n : 1;
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(h->kernel, sizeof h->kernel, "%s %s", u.sysname, u.release);
        snprintf(h->hostname, sizeof h->hostname, "%s", u.nodename);
    }
}
