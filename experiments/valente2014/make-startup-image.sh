#!/bin/bash
# Builds an ext4 image holding bash and Debian's python3.11 with its standard library, the two
# applications whose start-ups experiments/valente2014/record-startup.sh records (issue 24).
# usage: make-startup-image.sh [IMAGE] (default /srv/isback/app.ext4); root only.
img=${1:-/srv/isback/app.ext4}; app=$(mktemp -d)
rm -f $img; truncate -s 1G $img
mkfs.ext4 -F -q -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 $img || exit 1
L=$(losetup -f --show $img) || exit 1
mount $L $app || { losetup -d $L; exit 1; }
(
cd $app && mkdir -p usr/bin usr/lib usr/lib64 etc tmp && ln -s usr/lib lib && ln -s usr/lib64 lib64 && ln -s usr/bin bin
for f in /usr/bin/bash $(ldd /usr/bin/bash | grep -o '/[^ ]*') /usr/bin/python3.11 $(ldd /usr/bin/python3.11 | grep -o '/[^ ]*'); do
  mkdir -p $app$(dirname $f); cp -L $f $app$f
done
cp -a /usr/lib/python3.11 $app/usr/lib/
cp /etc/ld.so.cache $app/etc/
)
chroot $app /bin/bash -c 'exit 0' && echo bash ok
chroot $app /usr/bin/python3.11 -c 'import email.mime.multipart, http.client, json, xml.dom.minidom, asyncio, decimal, argparse, logging, unittest; print("py ok")'
du -sh $app
umount $app; losetup -d $L; rmdir $app
