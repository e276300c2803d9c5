/* Writes data.hdf with the HDF4 library's SD interface, the way MODIS
 * products are laid out: chunked, deflated scientific data sets, and a 1-D
 * table along an unlimited dimension that was never written, so that it
 * holds no records and no data element (MOD14's fire pixel tables when a
 * granule has no fire).
 *
 * The float array is stored little-endian (DFNT_LFLOAT32): kerchunk 0.2.10's
 * scanner writes every HDF4 float as native "<f4"/"<f8", which is wrong for
 * the default big-endian DFNT_FLOAT32, so fsspec and any faithful reader
 * return byte-swapped values there; a conformance case must be one the
 * scanner describes right. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mfhdf.h"

static int chunked(int32 sds, int32 c0, int32 c1) {
    HDF_CHUNK_DEF def;
    memset(&def, 0, sizeof def);
    def.comp.chunk_lengths[0] = c0;
    def.comp.chunk_lengths[1] = c1;
    def.comp.comp_type = COMP_CODE_DEFLATE;
    def.comp.cinfo.deflate.level = 6;
    return SDsetchunk(sds, def, HDF_CHUNK | HDF_COMP);
}

int main(void) {
    int32 sd = SDstart("data.hdf", DFACC_CREATE);
    if (sd == FAIL) return 1;
    const char *title = "zarrs_kerchunk HDF4 test";
    SDsetattr(sd, "title", DFNT_CHAR8, (int32)strlen(title), title);

    int32 tdims[2] = {40, 60}, start[2] = {0, 0};
    static float32 t[40][60];
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < 60; j++) t[i][j] = 250.0f + 0.5f * i + 0.25f * j;
    int32 sds = SDcreate(sd, "temperature", DFNT_LFLOAT32, 2, tdims);
    SDsetattr(sds, "units", DFNT_CHAR8, 1, "K");
    if (chunked(sds, 10, 20) == FAIL || SDwritedata(sds, start, NULL, tdims, t) == FAIL) return 2;
    SDendaccess(sds);

    int32 mdims[2] = {30, 20};
    static uint8 m[30][20];
    for (int i = 0; i < 30; i++)
        for (int j = 0; j < 20; j++) m[i][j] = (uint8)((i * 20 + j) % 6);
    sds = SDcreate(sd, "fire mask", DFNT_UINT8, 2, mdims);
    if (chunked(sds, 15, 10) == FAIL || SDwritedata(sds, start, NULL, mdims, m) == FAIL) return 3;
    SDendaccess(sds);

    int32 fdims[1] = {SD_UNLIMITED};
    sds = SDcreate(sd, "FP_power", DFNT_FLOAT32, 1, fdims);
    SDsetattr(sds, "units", DFNT_CHAR8, 2, "MW");
    SDendaccess(sds);

    return SDend(sd) == FAIL ? 5 : 0;
}
